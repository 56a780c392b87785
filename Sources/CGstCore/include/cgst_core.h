#ifndef IPCEMU_CGST_CORE_H
#define IPCEMU_CGST_CORE_H
/*
 * CGstCore: what both GStreamer shims share. GStreamer is initialised here and nowhere else
 * (CGstWebRTC for the WebRTC links, and the Camera's snapshot/encoder pipelines over the CGStreamer
 * system library), and a pipeline described in gst-launch syntax is parsed here, with the parser's
 * error as text.
 *
 * Like CGstWebRTC's header, this one includes no GStreamer header: a parsed pipeline comes back as
 * an opaque CgstCoreElement, which is a GstElement (C casts it; Swift converts the OpaquePointer).
 */
#include <stdbool.h>

typedef struct CgstCoreElement CgstCoreElement;

/* gst_init_check, once per process (pthread_once: thread-safe, and visible to ThreadSanitizer).
 * Every call returns the first one's result; on failure false and, if error_out is not NULL, the
 * reason, to free with cgst_core_free. */
bool cgst_core_initialize(char **error_out);

/* Parses a gst-launch description. Returns the element (a floating reference; a bin or a pipeline
 * when the description has more than one element) or NULL with, if error_out is not NULL, the
 * parser's message to free with cgst_core_free. Any error fails, a recoverable one (a missing
 * element or property) included. */
CgstCoreElement *cgst_core_parse_launch(const char *description, char **error_out);

/* Frees a string this target (or GLib) allocated; NULL is fine. */
void cgst_core_free(void *pointer);

#endif
