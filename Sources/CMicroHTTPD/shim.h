#ifndef IPCEMU_CMICROHTTPD_SHIM_H
#define IPCEMU_CMICROHTTPD_SHIM_H
/* The system's GNU libmicrohttpd (libmicrohttpd-dev; libmicrohttpd12 at run time), the control
 * API's HTTP server. Only CHTTPServe's C file uses it; Swift sees CHTTPServe's header. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <microhttpd.h>
#endif
