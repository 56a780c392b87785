/* The events a link sends down its bundle (issue 24 item 5).
 *
 * With bundle-policy max-bundle, webrtcbin 1.22 joins its audio and video sink pads in an
 * rtpfunnel, and that funnel, each time the next packet comes from the other pad than the last
 * one, pushes that pad's segment and every custom downstream-sticky event it holds down the rest
 * of the send path (RTP session, SRTP, DTLS funnel, nicesink). A link with video at 30 frames/s
 * and the shared tone at 7.8 packets/s switches about 15 times a second, so two events went down
 * thirteen pads for every packet or two. Two things make those pushes stop at the funnel:
 *
 * - webrtcbin's only custom sticky event there, "GstWebRtcBinUpdateTos" (one per transceiver,
 *   naming its mid), is dropped where webrtcbin sends it into its own sink pad. Its one use is
 *   setting the DSCP bits of the ICE sockets from the sender's priority; the project never sets a
 *   priority, and the default (low) maps to DSCP 0, which the sockets have anyway.
 * - every pushed pad sends the same segment event object (cgw_pusher.c), so a funnel that re-sends
 *   the other pad's segment re-sends the one its source pad already holds, and GStreamer stops
 *   there (a sticky event equal to the stored one is not pushed again).
 *
 * What still leaves the funnel can be counted (tests). */
#include "cgw_internal.h"

static const char *tos_event_name = "GstWebRtcBinUpdateTos";
static const char *counter_key = "cgw-bundled-events";

static GstPadProbeReturn drop_tos_event(GstPad *pad, GstPadProbeInfo *info, gpointer data) {
    (void)pad;
    (void)data;
    GstEvent *event = GST_PAD_PROBE_INFO_EVENT(info);
    if (event != NULL && GST_EVENT_TYPE(event) == GST_EVENT_CUSTOM_DOWNSTREAM_STICKY &&
        gst_event_has_name(event, tos_event_name)) {
        return GST_PAD_PROBE_DROP;
    }
    return GST_PAD_PROBE_OK;
}

static void probe_tos_events(GstPad *pad, gpointer data) {
    if (gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM, drop_tos_event, NULL, NULL) != 0) {
        (*(int *)data)++;
    }
}

int cgw_webrtc_drop_tos_events(CgwElement *webrtc) {
    if (webrtc == NULL) return 0;
    int added = 0;
    cgw_for_each_sink_pad(GST_ELEMENT(webrtc), probe_tos_events, &added);
    return added;
}

/* ---- Counting what leaves the funnel (tests) ---- */

typedef struct {
    gint events; /* atomic */
} BundledEvents;

static GstPadProbeReturn count_bundled_event(GstPad *pad, GstPadProbeInfo *info, gpointer data) {
    (void)pad;
    GstEvent *event = GST_PAD_PROBE_INFO_EVENT(info);
    if (event != NULL &&
        (GST_EVENT_TYPE(event) == GST_EVENT_SEGMENT || GST_EVENT_TYPE(event) == GST_EVENT_CUSTOM_DOWNSTREAM_STICKY)) {
        g_atomic_int_inc(&((BundledEvents *)data)->events);
    }
    return GST_PAD_PROBE_OK;
}

static void release_counter(gpointer data) { g_atomic_rc_box_release(data); }

typedef struct {
    BundledEvents *counter;
    int probed;
} FunnelSearch;

static void probe_funnel(GstElement *element, gpointer data) {
    FunnelSearch *search = data;
    if (!cgw_has_factory(element, "rtpfunnel")) return;
    GstPad *src = gst_element_get_static_pad(element, "src");
    if (src == NULL) return;
    /* The probe holds a reference of its own: the funnel may outlive webrtcbin's data. */
    if (gst_pad_add_probe(src, GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM, count_bundled_event,
                          g_atomic_rc_box_acquire(search->counter), release_counter) != 0) {
        search->probed++;
    }
    gst_object_unref(src);
}

bool cgw_webrtc_count_bundled_events(CgwElement *webrtc) {
    if (webrtc == NULL || g_object_get_data(G_OBJECT(webrtc), counter_key) != NULL) return false;
    BundledEvents *counter = g_atomic_rc_box_new0(BundledEvents);
    FunnelSearch search = {counter, 0};
    cgw_for_each_element(GST_BIN(webrtc), probe_funnel, &search);
    if (search.probed == 0) {
        g_atomic_rc_box_release(counter);
        return false;
    }
    g_object_set_data_full(G_OBJECT(webrtc), counter_key, counter, release_counter);
    return true;
}

int cgw_webrtc_bundled_events(CgwElement *webrtc) {
    if (webrtc == NULL) return -1;
    BundledEvents *counter = g_object_get_data(G_OBJECT(webrtc), counter_key);
    return counter != NULL ? g_atomic_int_get(&counter->events) : -1;
}
