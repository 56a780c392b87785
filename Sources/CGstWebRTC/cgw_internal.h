/* Private to CGstWebRTC's C files (not part of the module): the callback record and the small
 * helpers they share. The contract of each public function is in include/cgstwebrtc.h. */
#ifndef CGW_INTERNAL_H
#define CGW_INTERNAL_H

#define GST_USE_UNSTABLE_API 1
#include "cgstwebrtc.h"
#include "cgst_core.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <string.h>
#include <time.h>

#include <gst/app/gstappsink.h>
#include <gst/app/gstappsrc.h>
#include <gst/gst.h>
#include <gst/sdp/sdp.h>
#include <gst/video/video.h>
#include <gst/webrtc/webrtc.h>
#include <nice/agent.h>

/* ------------------------------------------------------------------------------------------------
 * A registered callback: the function, the caller's context, and the release that balances it.
 * Freed (and the context released) by the destroy notify of whatever holds it.
 * ---------------------------------------------------------------------------------------------- */
typedef struct {
    void *fn;
    void *ctx;
    cgw_release_fn release;
} CgwCallback;

/* A callback record whose destroy notify releases `ctx` (through `release`) and frees it. */
CgwCallback *cgw_callback_new(void *fn, void *ctx, cgw_release_fn release);
/* GDestroyNotify for a CgwCallback. */
void cgw_callback_free(gpointer data);
/* GClosureNotify for a CgwCallback. */
void cgw_callback_free_closure(gpointer data, GClosure *closure);
/* Stores a copy of `message` in *error_out (when error_out is not NULL). */
void cgw_set_error(char **error_out, const char *message);
/* The GParamSpec of `property` on `object`, or NULL. */
GParamSpec *cgw_find_property(void *object, const char *property);

/* Calls visit for every element inside bin, at any depth (cgw_media.c). */
void cgw_for_each_element(GstBin *bin, void (*visit)(GstElement *, gpointer), gpointer data);
/* Calls visit for every sink pad of element (cgw_media.c). Both visit each object once, after the
 * iteration is done, even when the iterator resyncs. */
void cgw_for_each_sink_pad(GstElement *element, void (*visit)(GstPad *, gpointer), gpointer data);
/* Whether element was made by the factory called name. */
bool cgw_has_factory(GstElement *element, const char *name);

/* A pushed pad with `caps` (taken) linked to `sink`, its stream-start, caps and shared segment
 * stored (cgw_pusher.c). NULL with *error_out set. */
GstPad *cgw_pusher_link(GstPad *sink, GstCaps *caps, char **error_out);
/* A pad event function that drops every event it gets (cgw_pusher.c). */
gboolean cgw_drop_event(GstPad *pad, GstObject *parent, GstEvent *event);

/* Every trampoline starts with this: the thread it runs on runs GStreamer callbacks (see
 * cgw_current_thread_runs_gstreamer_callbacks). */
#define MARK_CALLBACK_THREAD() cgw_mark_callback_thread()

#endif
