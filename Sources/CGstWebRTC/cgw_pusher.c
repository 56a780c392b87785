/* A pad the caller pushes into directly, on the caller's thread (issue 24 item 5): a link fed by a
 * shared encoder's fan-out sends each access unit through its whole send path (parser, payloader,
 * RTP session, SRTP, the socket) on the fan-out's delivery thread, instead of queueing it in an
 * appsrc whose own streaming thread would be woken per frame and per link. */
#include "cgw_internal.h"

/* Events that end at a pad of ours (a GstPadEventFunction that drops them): on a pushed pad the
 * upstream ones (a force-key-unit from downstream, latency, reconfigure; the caller's probes see
 * them first), and at the feed's payloader both directions (cgw_rtp_feed.c). */
gboolean cgw_drop_event(GstPad *pad, GstObject *parent, GstEvent *event) {
    (void)pad;
    (void)parent;
    gst_event_unref(event);
    return TRUE;
}

static gboolean pusher_query(GstPad *pad, GstObject *parent, GstQuery *query) {
    switch (GST_QUERY_TYPE(query)) {
    case GST_QUERY_LATENCY:
        /* A live source: frames come as they are made. */
        gst_query_set_latency(query, TRUE, 0, GST_CLOCK_TIME_NONE);
        return TRUE;
    case GST_QUERY_CAPS: {
        GstCaps *caps = gst_pad_get_current_caps(pad);
        if (caps == NULL) caps = gst_pad_get_pad_template_caps(pad);
        GstCaps *filter = NULL;
        gst_query_parse_caps(query, &filter);
        if (filter != NULL) {
            GstCaps *both = gst_caps_intersect_full(filter, caps, GST_CAPS_INTERSECT_FIRST);
            gst_caps_unref(caps);
            caps = both;
        }
        gst_query_set_caps_result(query, caps);
        gst_caps_unref(caps);
        return TRUE;
    }
    default:
        return gst_pad_query_default(pad, parent, query);
    }
}

/* One segment event for every pushed pad of the process (time, from 0, rate 1: what each made on
 * its own before). A link's audio and video pads then hold the same event, and webrtcbin's bundle
 * funnel, which re-sends the segment of whichever pad sent last, re-sends the one already sent:
 * GStreamer pushes it no further (cgw_bundle_events.c). Kept for the life of the process. */
static GstEvent *shared_segment = NULL;

static gpointer make_shared_segment(gpointer unused) {
    (void)unused;
    GstSegment segment;
    gst_segment_init(&segment, GST_FORMAT_TIME);
    shared_segment = gst_event_new_segment(&segment);
    return NULL;
}

static GstEvent *pushed_segment(void) {
    static GOnce once = G_ONCE_INIT;
    g_once(&once, make_shared_segment, NULL);
    return gst_event_ref(shared_segment);
}

/* A pushed pad with `caps` (taken), linked to `sink`, its sticky events stored. NULL with
 * *error_out set. */
GstPad *cgw_pusher_link(GstPad *sink, GstCaps *caps, char **error_out) {
    GstPadTemplate *templ = gst_pad_template_new("src", GST_PAD_SRC, GST_PAD_ALWAYS, caps);
    GstPad *pad = gst_pad_new_from_template(templ, "pushed");
    gst_object_unref(templ);
    gst_object_ref_sink(pad);
    gst_pad_set_event_function(pad, cgw_drop_event);
    gst_pad_set_query_function(pad, pusher_query);
    GstPadLinkReturn linked = gst_pad_link(pad, sink);
    if (linked != GST_PAD_LINK_OK || !gst_pad_set_active(pad, TRUE)) {
        gst_caps_unref(caps);
        gst_object_unref(pad);
        cgw_set_error(error_out, "the pushed input could not be linked");
        return NULL;
    }
    /* Sticky: kept on the pad and sent ahead of the first buffer once the pipeline plays. */
    gchar *stream_id = g_strdup_printf("pushed-%p", (void *)pad);
    GstEvent *start = gst_event_new_stream_start(stream_id);
    g_free(stream_id);
    gst_event_set_group_id(start, gst_util_group_id_next());
    gst_pad_push_event(pad, start);
    gst_pad_push_event(pad, gst_event_new_caps(caps));
    gst_pad_push_event(pad, pushed_segment());
    gst_caps_unref(caps);
    return pad;
}

CgwPad *cgw_pusher_attach(CgwElement *pipeline, const char *element_name, const char *caps_text, char **error_out) {
    if (pipeline == NULL || element_name == NULL || caps_text == NULL) {
        cgw_set_error(error_out, "no pipeline, element or caps");
        return NULL;
    }
    GstCaps *caps = gst_caps_from_string(caps_text);
    if (caps == NULL) {
        cgw_set_error(error_out, "unreadable caps for the pushed input");
        return NULL;
    }
    GstElement *element = gst_bin_get_by_name(GST_BIN(pipeline), element_name);
    GstPad *sink = element != NULL ? gst_element_get_static_pad(element, "sink") : NULL;
    if (element != NULL) gst_object_unref(element);
    if (sink == NULL) {
        gst_caps_unref(caps);
        cgw_set_error(error_out, "the pushed input's element or its sink pad is missing");
        return NULL;
    }
    GstPad *pad = cgw_pusher_link(sink, caps, error_out);
    gst_object_unref(sink);
    return pad;
}

bool cgw_pusher_push(CgwPad *pad, const void *bytes, size_t length, int64_t pts_ns, int64_t duration_ns,
                     bool delta_unit) {
    if (pad == NULL || bytes == NULL || length == 0) return false;
    GstBuffer *buffer = gst_buffer_new_memdup(bytes, length);
    GST_BUFFER_PTS(buffer) = pts_ns >= 0 ? (GstClockTime)pts_ns : GST_CLOCK_TIME_NONE;
    GST_BUFFER_DTS(buffer) = GST_CLOCK_TIME_NONE;
    GST_BUFFER_DURATION(buffer) = duration_ns >= 0 ? (GstClockTime)duration_ns : GST_CLOCK_TIME_NONE;
    if (delta_unit) GST_BUFFER_FLAG_SET(buffer, GST_BUFFER_FLAG_DELTA_UNIT);
    return gst_pad_push(pad, buffer) == GST_FLOW_OK;
}

void cgw_pusher_detach(CgwPad *pad) {
    if (pad == NULL) return;
    gst_pad_set_active(pad, FALSE);
    GstPad *peer = gst_pad_get_peer(pad);
    if (peer != NULL) {
        gst_pad_unlink(pad, peer);
        gst_object_unref(peer);
    }
}
