/* CGstWebRTC: an rtpjitterbuffer's first packet enters only once the events queued ahead of it have
 * left (see cgw_jitterbuffer_start_after_queued_events in include/cgstwebrtc.h).
 *
 * Why: GStreamer 1.22's rtpjitterbuffer queues the serialized events it receives (stream-start,
 * caps, segment) in the same queue as packets, and its own thread pushes them. Its fast start
 * (faststart-min-packets) is checked only when a packet arrives, and only when the head of that
 * queue is a packet. When a whole first frame arrives before that thread has pushed the events (a
 * burst released by the peer's DTLS), no later arrival re-checks it, and the first packet waits for
 * its deadline (the latency) or the next frame. Holding the first packet at the sink pad until the
 * events have gone out of the source pad makes the head a packet by the time the second packet
 * arrives, so fast start sees it. The wait happens once per jitter buffer, usually well under a
 * millisecond, and never longer than the buffer's latency (after which the packet would have left
 * anyway). */
#include "cgw_internal.h"

typedef struct {
    GMutex lock;
    GCond left;
    guint queued;  /* serialized events in at the sink pad before the first packet */
    guint out;     /* serialized events out at the source pad */
    gboolean started;  /* the first packet came: stop counting */
} JitterBufferStart;

static void start_state_clear(JitterBufferStart *state) {
    g_mutex_clear(&state->lock);
    g_cond_clear(&state->left);
}

static void start_state_release_cleared(gpointer data) {
    g_atomic_rc_box_release_full(data, (GDestroyNotify)start_state_clear);
}

/* Events that rtpjitterbuffer queues rather than forwards: the serialized ones other than the flushes. */
static gboolean queued_by_jitterbuffer(GstEvent *event) {
    GstEventType type = GST_EVENT_TYPE(event);
    return GST_EVENT_IS_SERIALIZED(event) && type != GST_EVENT_FLUSH_STOP && type != GST_EVENT_FLUSH_START;
}

static GstPadProbeReturn on_event_out(GstPad *pad, GstPadProbeInfo *info, gpointer data) {
    (void)pad;
    JitterBufferStart *state = data;
    GstEvent *event = GST_PAD_PROBE_INFO_EVENT(info);
    gboolean done;
    g_mutex_lock(&state->lock);
    if (event != NULL && queued_by_jitterbuffer(event)) state->out++;
    g_cond_broadcast(&state->left);
    done = state->started;
    g_mutex_unlock(&state->lock);
    return done ? GST_PAD_PROBE_REMOVE : GST_PAD_PROBE_OK;
}

static GstPadProbeReturn on_data_in(GstPad *pad, GstPadProbeInfo *info, gpointer data) {
    JitterBufferStart *state = data;
    if (GST_PAD_PROBE_INFO_TYPE(info) & GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM) {
        GstEvent *event = GST_PAD_PROBE_INFO_EVENT(info);
        if (event != NULL && queued_by_jitterbuffer(event)) {
            g_mutex_lock(&state->lock);
            state->queued++;
            g_mutex_unlock(&state->lock);
        }
        return GST_PAD_PROBE_OK;
    }
    /* The first packet (or list of them): wait for the queued events to leave, at most the latency. */
    guint latency_ms = 0;
    GstObject *parent = gst_pad_get_parent(pad);
    if (parent != NULL) {
        if (cgw_find_property(parent, "latency") != NULL) g_object_get(parent, "latency", &latency_ms, NULL);
        gst_object_unref(parent);
    }
    gint64 deadline = g_get_monotonic_time() + (gint64)latency_ms * G_TIME_SPAN_MILLISECOND;
    g_mutex_lock(&state->lock);
    while (state->out < state->queued) {
        if (!g_cond_wait_until(&state->left, &state->lock, deadline)) break;
    }
    state->started = TRUE;
    g_mutex_unlock(&state->lock);
    return GST_PAD_PROBE_REMOVE;
}

bool cgw_jitterbuffer_start_after_queued_events(CgwElement *jitterbuffer) {
    GstElement *element = (GstElement *)jitterbuffer;
    if (element == NULL || !GST_IS_ELEMENT(element)) return false;
    GstPad *sink = gst_element_get_static_pad(element, "sink");
    GstPad *src = gst_element_get_static_pad(element, "src");
    bool ok = sink != NULL && src != NULL;
    if (ok) {
        JitterBufferStart *state = g_atomic_rc_box_new0(JitterBufferStart);
        g_mutex_init(&state->lock);
        g_cond_init(&state->left);
        /* Each probe holds a reference; the last one released clears the lock and condition. */
        g_atomic_rc_box_acquire(state);
        gst_pad_add_probe(src, GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM, on_event_out, state,
                          start_state_release_cleared);
        gst_pad_add_probe(sink,
                          GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM | GST_PAD_PROBE_TYPE_BUFFER |
                              GST_PAD_PROBE_TYPE_BUFFER_LIST,
                          on_data_in, state, start_state_release_cleared);
    }
    if (sink != NULL) gst_object_unref(sink);
    if (src != NULL) gst_object_unref(src);
    return ok;
}
