#ifndef IPCEMU_CV4L2_H
#define IPCEMU_CV4L2_H
/* Shim over libv4l2: constants and non-variadic wrappers (DESIGN.md interop rules). */
int cv4l2_placeholder(void);
#endif
