/* CGstWebRTC outputs: see include/cgst_display.h for the contract of each function. */
#include "cgst_display.h"
#include "cgst_core.h"

#include <gst/gst.h>

static void set_error(char **error_out, const char *message) {
    if (error_out != NULL) *error_out = g_strdup(message != NULL ? message : "unknown error");
}

/* ------------------------------------------------------------------------------------------------
 * Can the sink open?
 * ---------------------------------------------------------------------------------------------- */

bool cgw_output_opens(const char *description, char **error_out) {
    GstElement *pipeline = (GstElement *)cgst_core_parse_launch(description, error_out);
    if (pipeline == NULL) return false;
    bool opened = gst_element_set_state(pipeline, GST_STATE_READY) != GST_STATE_CHANGE_FAILURE;
    if (!opened) {
        /* The sink said why on the bus (a bin made by gst_parse_launch has one). */
        GstBus *bus = gst_element_get_bus(pipeline);
        GstMessage *message = bus != NULL ? gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR) : NULL;
        if (message != NULL) {
            GError *why = NULL;
            gst_message_parse_error(message, &why, NULL);
            set_error(error_out, why != NULL ? why->message : "the sink did not open");
            g_clear_error(&why);
            gst_message_unref(message);
        } else {
            set_error(error_out, "the sink did not open");
        }
        if (bus != NULL) gst_object_unref(bus);
    }
    gst_element_set_state(pipeline, GST_STATE_NULL);
    gst_object_unref(pipeline);
    return opened;
}

/* ------------------------------------------------------------------------------------------------
 * A guarded branch: its entry element's sink pad drops buffers once the branch failed or is
 * finishing, and its sink's sink pad tells when the end-of-stream arrived.
 * ---------------------------------------------------------------------------------------------- */

typedef struct {
    GstPad *entry_src; /* the entry element's src pad: its last flow return says whether the branch failed */
    GstPad *entry_sink;
    GMutex lock;
    GCond arrived;
    gboolean finishing;
    gboolean eos_arrived;
} OutputGuard;

static const char *guard_key = "cgw-output-guard";

static void guard_clear(gpointer data) {
    OutputGuard *guard = data;
    if (guard->entry_src != NULL) gst_object_unref(guard->entry_src);
    if (guard->entry_sink != NULL) gst_object_unref(guard->entry_sink);
    g_mutex_clear(&guard->lock);
    g_cond_clear(&guard->arrived);
}

static void guard_release(gpointer data) { g_atomic_rc_box_release_full(data, guard_clear); }

static bool guard_branch_failed(OutputGuard *guard) {
    GstFlowReturn last = gst_pad_get_last_flow_return(guard->entry_src);
    /* NOT_LINKED, EOS, FLUSHING after a stop, NOT_NEGOTIATED, ERROR: the branch takes no more. */
    return last != GST_FLOW_OK && last != GST_FLOW_FLUSHING;
}

static GstPadProbeReturn guard_entry_probe(GstPad *pad, GstPadProbeInfo *info, gpointer data) {
    (void)pad;
    OutputGuard *guard = data;
    g_mutex_lock(&guard->lock);
    gboolean finishing = guard->finishing;
    g_mutex_unlock(&guard->lock);
    if (!finishing && !guard_branch_failed(guard)) return GST_PAD_PROBE_OK;
    /* Dropped, and the pusher (the tee) is told it went through. */
    if (info->type & GST_PAD_PROBE_TYPE_BUFFER) gst_buffer_unref(GST_PAD_PROBE_INFO_BUFFER(info));
    else if (info->type & GST_PAD_PROBE_TYPE_BUFFER_LIST) gst_buffer_list_unref(GST_PAD_PROBE_INFO_BUFFER_LIST(info));
    GST_PAD_PROBE_INFO_DATA(info) = NULL;
    GST_PAD_PROBE_INFO_FLOW_RETURN(info) = GST_FLOW_OK;
    return GST_PAD_PROBE_HANDLED;
}

static GstPadProbeReturn guard_eos_probe(GstPad *pad, GstPadProbeInfo *info, gpointer data) {
    (void)pad;
    OutputGuard *guard = data;
    GstEvent *event = GST_PAD_PROBE_INFO_EVENT(info);
    if (event != NULL && GST_EVENT_TYPE(event) == GST_EVENT_EOS) {
        g_mutex_lock(&guard->lock);
        guard->eos_arrived = TRUE;
        g_cond_broadcast(&guard->arrived);
        g_mutex_unlock(&guard->lock);
    }
    return GST_PAD_PROBE_OK;
}

/* The last element of a linear chain that starts at `element` (new reference). */
static GstElement *chain_end(GstElement *element) {
    GstElement *current = gst_object_ref(element);
    for (int hops = 0; hops < 32; hops++) {
        GstPad *src = gst_element_get_static_pad(current, "src");
        GstPad *peer = src != NULL ? gst_pad_get_peer(src) : NULL;
        if (src != NULL) gst_object_unref(src);
        if (peer == NULL) break;
        GstElement *next = gst_pad_get_parent_element(peer);
        gst_object_unref(peer);
        if (next == NULL) break;
        gst_object_unref(current);
        current = next;
    }
    return current;
}

bool cgw_output_guard(CgwElement *bin, const char *entry_name) {
    if (bin == NULL || !GST_IS_BIN(bin)) return false;
    GstElement *entry = gst_bin_get_by_name(GST_BIN(bin), entry_name);
    if (entry == NULL) return false;
    GstPad *entry_sink = gst_element_get_static_pad(entry, "sink");
    GstPad *entry_src = gst_element_get_static_pad(entry, "src");
    GstElement *sink = chain_end(entry);
    GstPad *sink_pad = gst_element_get_static_pad(sink, "sink");
    bool ok = entry_sink != NULL && entry_src != NULL && sink_pad != NULL && sink != entry;
    if (ok) {
        OutputGuard *guard = g_atomic_rc_box_new0(OutputGuard);
        g_mutex_init(&guard->lock);
        g_cond_init(&guard->arrived);
        guard->entry_src = gst_object_ref(entry_src);
        guard->entry_sink = gst_object_ref(entry_sink);
        gst_pad_add_probe(entry_sink, GST_PAD_PROBE_TYPE_BUFFER | GST_PAD_PROBE_TYPE_BUFFER_LIST, guard_entry_probe,
                          g_atomic_rc_box_acquire(guard), guard_release);
        gst_pad_add_probe(sink_pad, GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM, guard_eos_probe,
                          g_atomic_rc_box_acquire(guard), guard_release);
        g_object_set_data_full(G_OBJECT(entry), guard_key, guard, guard_release);
    }
    if (sink_pad != NULL) gst_object_unref(sink_pad);
    gst_object_unref(sink);
    if (entry_src != NULL) gst_object_unref(entry_src);
    if (entry_sink != NULL) gst_object_unref(entry_sink);
    gst_object_unref(entry);
    return ok;
}

static OutputGuard *find_guard(CgwElement *bin, const char *entry_name) {
    if (bin == NULL || !GST_IS_BIN(bin)) return NULL;
    GstElement *entry = gst_bin_get_by_name(GST_BIN(bin), entry_name);
    if (entry == NULL) return NULL;
    OutputGuard *guard = g_object_get_data(G_OBJECT(entry), guard_key);
    if (guard != NULL) g_atomic_rc_box_acquire(guard);
    gst_object_unref(entry);
    return guard;
}

bool cgw_output_failed(CgwElement *bin, const char *entry_name) {
    OutputGuard *guard = find_guard(bin, entry_name);
    if (guard == NULL) return false;
    bool failed = guard_branch_failed(guard);
    guard_release(guard);
    return failed;
}

bool cgw_output_finish(CgwElement *bin, const char *entry_name, unsigned timeout_ms) {
    OutputGuard *guard = find_guard(bin, entry_name);
    if (guard == NULL) return false;
    g_mutex_lock(&guard->lock);
    gboolean already = guard->finishing;
    guard->finishing = TRUE;
    g_mutex_unlock(&guard->lock);
    if (!already) gst_pad_send_event(guard->entry_sink, gst_event_new_eos());
    gint64 deadline = g_get_monotonic_time() + (gint64)timeout_ms * G_TIME_SPAN_MILLISECOND;
    g_mutex_lock(&guard->lock);
    while (!guard->eos_arrived) {
        if (!g_cond_wait_until(&guard->arrived, &guard->lock, deadline)) break;
    }
    bool arrived = guard->eos_arrived;
    g_mutex_unlock(&guard->lock);
    guard_release(guard);
    return arrived;
}
