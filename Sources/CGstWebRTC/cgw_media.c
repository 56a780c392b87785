/* CGstWebRTC, media: receive branches, frames and snapshots, appsrc, and pad probes. See
 * include/cgstwebrtc.h for the contract of each function. */
#include "cgw_internal.h"

/* ------------------------------------------------------------------------------------------------
 * Receive branches, frames, snapshots
 * ---------------------------------------------------------------------------------------------- */

CgwElement *cgw_bin_new_from_description(const char *description, char **error_out) {
    GError *err = NULL;
    GstElement *bin = gst_parse_bin_from_description(description, TRUE, &err);
    if (err != NULL || bin == NULL) {
        cgw_set_error(error_out, err != NULL ? err->message : "could not build the bin");
        g_clear_error(&err);
        if (bin != NULL) gst_object_unref(bin);
        return NULL;
    }
    return gst_object_ref_sink(bin);
}

bool cgw_link_pad_to_bin(CgwElement *pipeline, CgwPad *pad, CgwElement *bin, char **error_out) {
    if (!gst_bin_add(GST_BIN(pipeline), bin)) {
        cgw_set_error(error_out, "could not add the bin to the pipeline");
        return false;
    }
    GstPad *sink = gst_element_get_static_pad(bin, "sink");
    if (sink == NULL) {
        cgw_set_error(error_out, "the bin has no sink pad");
        gst_bin_remove(GST_BIN(pipeline), bin);
        return false;
    }
    gst_element_sync_state_with_parent(bin);
    GstPadLinkReturn linked = gst_pad_link(pad, sink);
    gst_object_unref(sink);
    if (linked != GST_PAD_LINK_OK) {
        gchar *text = g_strdup_printf("pad link failed (%d)", (int)linked);
        cgw_set_error(error_out, text);
        g_free(text);
        gst_element_set_state(bin, GST_STATE_NULL);
        gst_bin_remove(GST_BIN(pipeline), bin);
        return false;
    }
    return true;
}

bool cgw_pipeline_add_bin(CgwElement *pipeline, CgwElement *bin) {
    return gst_bin_add(GST_BIN(pipeline), bin);
}

bool cgw_link_pad_to_added_bin(CgwPad *pad, CgwElement *bin, char **error_out) {
    GstPad *sink = gst_element_get_static_pad(bin, "sink");
    if (sink == NULL) {
        cgw_set_error(error_out, "the bin has no sink pad");
        return false;
    }
    GstPadLinkReturn linked = gst_pad_link(pad, sink);
    gst_object_unref(sink);
    if (linked != GST_PAD_LINK_OK) {
        gchar *text = g_strdup_printf("pad link failed (%d)", (int)linked);
        cgw_set_error(error_out, text);
        g_free(text);
        return false;
    }
    return true;
}

static GstFlowReturn appsink_video_sample(GstAppSink *sink, gpointer data) {
    CgwCallback *cb = data;
    MARK_CALLBACK_THREAD();
    int64_t arrival = cgw_unix_time_ns();
    GstSample *sample = gst_app_sink_pull_sample(sink);
    if (sample == NULL) return GST_FLOW_EOS;
    GstCaps *caps = gst_sample_get_caps(sample);
    GstBuffer *buffer = gst_sample_get_buffer(sample);
    GstVideoInfo info;
    if (caps != NULL && buffer != NULL && gst_video_info_from_caps(&info, caps)) {
        GstVideoFrame frame;
        if (gst_video_frame_map(&frame, &info, buffer, GST_MAP_READ)) {
            int64_t pts = GST_BUFFER_PTS_IS_VALID(buffer) ? (int64_t)GST_BUFFER_PTS(buffer) : -1;
            ((cgw_video_frame_fn)cb->fn)(cb->ctx, sample, GST_VIDEO_FRAME_PLANE_DATA(&frame, 0),
                                         GST_VIDEO_FRAME_WIDTH(&frame), GST_VIDEO_FRAME_HEIGHT(&frame),
                                         GST_VIDEO_FRAME_PLANE_STRIDE(&frame, 0), pts, arrival);
            gst_video_frame_unmap(&frame);
        }
    }
    gst_sample_unref(sample);
    return GST_FLOW_OK;
}

/* Hands each new sample of an appsink to `on_sample` with (fn, ctx); `release` frees ctx when the
 * callbacks are replaced or the sink goes, or at once when the element is not an appsink. */
static bool appsink_set_sample_callback(CgwElement *appsink, GstFlowReturn (*on_sample)(GstAppSink *, gpointer),
                                        void *fn, void *ctx, cgw_release_fn release) {
    if (appsink == NULL || !GST_IS_APP_SINK(appsink)) {
        if (release != NULL) release(ctx);
        return false;
    }
    GstAppSinkCallbacks callbacks = {0};
    callbacks.new_sample = on_sample;
    gst_app_sink_set_callbacks(GST_APP_SINK(appsink), &callbacks, cgw_callback_new(fn, ctx, release), cgw_callback_free);
    return true;
}

bool cgw_appsink_on_video_frame(CgwElement *appsink, cgw_video_frame_fn fn, void *ctx, cgw_release_fn release) {
    return appsink_set_sample_callback(appsink, appsink_video_sample, (void *)fn, ctx, release);
}

static GstFlowReturn appsink_counted_sample(GstAppSink *sink, gpointer data) {
    CgwCallback *cb = data;
    MARK_CALLBACK_THREAD();
    GstSample *sample = gst_app_sink_pull_sample(sink);
    if (sample == NULL) return GST_FLOW_EOS;
    ((cgw_notify_fn)cb->fn)(cb->ctx);
    gst_sample_unref(sample);
    return GST_FLOW_OK;
}

bool cgw_appsink_on_sample(CgwElement *appsink, cgw_notify_fn fn, void *ctx, cgw_release_fn release) {
    return appsink_set_sample_callback(appsink, appsink_counted_sample, (void *)fn, ctx, release);
}

CgwSample *cgw_sample_ref(CgwSample *sample) { return sample != NULL ? gst_sample_ref(sample) : NULL; }
void cgw_sample_unref(CgwSample *sample) {
    if (sample != NULL) gst_sample_unref(sample);
}

bool cgw_sample_encode_jpeg(CgwSample *sample, uint8_t **out_bytes, size_t *out_length, char **error_out) {
    GError *err = NULL;
    GstCaps *jpeg = gst_caps_new_empty_simple("image/jpeg");
    GstSample *converted = gst_video_convert_sample(sample, jpeg, 5 * GST_SECOND, &err);
    gst_caps_unref(jpeg);
    if (converted == NULL) {
        cgw_set_error(error_out, err != NULL ? err->message : "conversion to JPEG failed");
        g_clear_error(&err);
        return false;
    }
    GstBuffer *buffer = gst_sample_get_buffer(converted);
    GstMapInfo map;
    if (buffer == NULL || !gst_buffer_map(buffer, &map, GST_MAP_READ)) {
        gst_sample_unref(converted);
        cgw_set_error(error_out, "JPEG buffer unreadable");
        return false;
    }
    *out_bytes = g_memdup2(map.data, map.size);
    *out_length = map.size;
    gst_buffer_unmap(buffer, &map);
    gst_sample_unref(converted);
    return true;
}

/* ------------------------------------------------------------------------------------------------
 * appsrc
 * ---------------------------------------------------------------------------------------------- */

bool cgw_appsrc_push(CgwElement *appsrc, const void *bytes, size_t length, int64_t pts_ns, int64_t duration_ns,
                     bool delta_unit) {
    if (appsrc == NULL || !GST_IS_APP_SRC(appsrc)) return false;
    GstBuffer *buffer = gst_buffer_new_memdup(bytes, length);
    GST_BUFFER_PTS(buffer) = pts_ns >= 0 ? (GstClockTime)pts_ns : GST_CLOCK_TIME_NONE;
    GST_BUFFER_DTS(buffer) = GST_CLOCK_TIME_NONE;
    GST_BUFFER_DURATION(buffer) = duration_ns >= 0 ? (GstClockTime)duration_ns : GST_CLOCK_TIME_NONE;
    if (delta_unit) GST_BUFFER_FLAG_SET(buffer, GST_BUFFER_FLAG_DELTA_UNIT);
    return gst_app_src_push_buffer(GST_APP_SRC(appsrc), buffer) == GST_FLOW_OK;
}

void cgw_appsrc_end_of_stream(CgwElement *appsrc) {
    if (appsrc != NULL && GST_IS_APP_SRC(appsrc)) gst_app_src_end_of_stream(GST_APP_SRC(appsrc));
}

/* ------------------------------------------------------------------------------------------------
 * Probes
 * ---------------------------------------------------------------------------------------------- */

CgwPad *cgw_element_get_static_pad(CgwElement *element, const char *name) {
    return element != NULL ? gst_element_get_static_pad(element, name) : NULL;
}

void cgw_pad_unref(CgwPad *pad) {
    if (pad != NULL) gst_object_unref(pad);
}

static GstPadProbeReturn count_buffers_probe(GstPad *pad, GstPadProbeInfo *info, gpointer data) {
    (void)pad;
    CgwCallback *cb = data;
    MARK_CALLBACK_THREAD();
    unsigned buffers = 0, keys = 0;
    size_t bytes = 0;
    if (info->type & GST_PAD_PROBE_TYPE_BUFFER) {
        GstBuffer *buffer = GST_PAD_PROBE_INFO_BUFFER(info);
        buffers = 1;
        bytes = gst_buffer_get_size(buffer);
        keys = GST_BUFFER_FLAG_IS_SET(buffer, GST_BUFFER_FLAG_DELTA_UNIT) ? 0 : 1;
    } else if (info->type & GST_PAD_PROBE_TYPE_BUFFER_LIST) {
        GstBufferList *list = GST_PAD_PROBE_INFO_BUFFER_LIST(info);
        guint n = gst_buffer_list_length(list);
        for (guint i = 0; i < n; i++) {
            GstBuffer *buffer = gst_buffer_list_get(list, i);
            buffers++;
            bytes += gst_buffer_get_size(buffer);
            if (!GST_BUFFER_FLAG_IS_SET(buffer, GST_BUFFER_FLAG_DELTA_UNIT)) keys++;
        }
    }
    if (buffers > 0) ((cgw_buffers_fn)cb->fn)(cb->ctx, buffers, bytes, keys);
    return GST_PAD_PROBE_OK;
}

unsigned long cgw_pad_count_buffers(CgwPad *pad, cgw_buffers_fn fn, void *ctx, cgw_release_fn release) {
    return gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_BUFFER | GST_PAD_PROBE_TYPE_BUFFER_LIST, count_buffers_probe,
                             cgw_callback_new((void *)fn, ctx, release), cgw_callback_free);
}

/* Every object the iterator yields, each held by a reference (the array's free function drops
 * them). When the iterator resyncs the gathering starts again, so the callers below visit each
 * object once, after the iteration is done. Frees the iterator. */
static GPtrArray *gather_objects(GstIterator *it) {
    GPtrArray *objects = g_ptr_array_new_with_free_func(gst_object_unref);
    GValue item = G_VALUE_INIT;
    gboolean done = FALSE;
    while (!done) {
        switch (gst_iterator_next(it, &item)) {
        case GST_ITERATOR_OK:
            g_ptr_array_add(objects, g_value_dup_object(&item));
            g_value_reset(&item);
            break;
        case GST_ITERATOR_RESYNC:
            g_ptr_array_set_size(objects, 0);
            gst_iterator_resync(it);
            break;
        default:
            done = TRUE;
            break;
        }
    }
    g_value_unset(&item);
    gst_iterator_free(it);
    return objects;
}

/* Calls visit(element, data) for every element inside a bin, recursively. */
void cgw_for_each_element(GstBin *bin, void (*visit)(GstElement *, gpointer), gpointer data) {
    GPtrArray *elements = gather_objects(gst_bin_iterate_recurse(bin));
    for (guint i = 0; i < elements->len; i++) visit(GST_ELEMENT(g_ptr_array_index(elements, i)), data);
    g_ptr_array_unref(elements);
}

/* Calls visit(pad, data) for every sink pad of element. */
void cgw_for_each_sink_pad(GstElement *element, void (*visit)(GstPad *, gpointer), gpointer data) {
    GPtrArray *pads = gather_objects(gst_element_iterate_sink_pads(element));
    for (guint i = 0; i < pads->len; i++) visit(GST_PAD(g_ptr_array_index(pads, i)), data);
    g_ptr_array_unref(pads);
}

bool cgw_has_factory(GstElement *element, const char *name) {
    GstElementFactory *factory = gst_element_get_factory(element);
    return factory != NULL && g_strcmp0(GST_OBJECT_NAME(factory), name) == 0;
}

static bool parent_type_is(GstElement *element, const char *type_name) {
    GstObject *parent = gst_object_get_parent(GST_OBJECT(element));
    bool result = parent != NULL && g_strcmp0(G_OBJECT_TYPE_NAME(parent), type_name) == 0;
    if (parent != NULL) gst_object_unref(parent);
    return result;
}

typedef struct {
    CgwCallback *shared;
    int added;
} RtcpProbeSearch;

static const char *rtcp_probed_key = "cgw-rtcp-probed";

/* One callback shared by several probes: reference counted, released with the last probe. */
static void shared_callback_clear(gpointer data) {
    CgwCallback *cb = data;
    if (cb->release != NULL) cb->release(cb->ctx);
}

static void shared_callback_release(gpointer data) { g_atomic_rc_box_release_full(data, shared_callback_clear); }

static void probe_rtcp_of_receive_bin(GstElement *element, gpointer data) {
    RtcpProbeSearch *search = data;
    if (g_strcmp0(G_OBJECT_TYPE_NAME(element), "TransportReceiveBin") != 0) return;
    if (g_object_get_data(G_OBJECT(element), rtcp_probed_key) != NULL) return;
    GstPad *pad = gst_element_get_static_pad(element, "rtcp_src");
    if (pad == NULL) return;
    gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_BUFFER | GST_PAD_PROBE_TYPE_BUFFER_LIST, count_buffers_probe,
                      g_atomic_rc_box_acquire(search->shared), shared_callback_release);
    gst_object_unref(pad);
    g_object_set_data(G_OBJECT(element), rtcp_probed_key, GINT_TO_POINTER(1));
    search->added++;
}

int cgw_webrtc_count_received_rtcp(CgwElement *webrtc, cgw_buffers_fn fn, void *ctx, cgw_release_fn release) {
    RtcpProbeSearch search = {g_atomic_rc_box_new0(CgwCallback), 0};
    search.shared->fn = (void *)fn;
    search.shared->ctx = ctx;
    search.shared->release = release;
    cgw_for_each_element(GST_BIN(webrtc), probe_rtcp_of_receive_bin, &search);
    shared_callback_release(search.shared);
    return search.added;
}

static bool task_paused(GstElement *element) {
    GstPad *src = gst_element_get_static_pad(element, "src");
    if (src == NULL) return false;
    bool paused = gst_pad_get_task_state(src) == GST_TASK_PAUSED;
    gst_object_unref(src);
    return paused;
}

static void collect_stalled(GstElement *element, gpointer data) {
    GPtrArray *stalled = data;
    if (GST_STATE(element) != GST_STATE_PLAYING || !task_paused(element)) return;
    if (cgw_has_factory(element, "nicesrc") ||
        (cgw_has_factory(element, "queue") && parent_type_is(element, "TransportReceiveBin"))) {
        g_ptr_array_add(stalled, gst_object_ref(element));
    }
}

static void collect_behind_parent(GstElement *element, gpointer data) {
    GPtrArray *behind = data;
    if (gst_element_is_locked_state(element) || GST_STATE_PENDING(element) != GST_STATE_VOID_PENDING) return;
    GstObject *parent = gst_object_get_parent(GST_OBJECT(element));
    if (parent == NULL) return;
    if (GST_IS_ELEMENT(parent) && GST_STATE(parent) == GST_STATE_PLAYING &&
        GST_STATE_PENDING(parent) == GST_STATE_VOID_PENDING && GST_STATE(element) < GST_STATE_PLAYING) {
        g_ptr_array_add(behind, gst_object_ref(element));
    }
    gst_object_unref(parent);
}

int cgw_webrtc_restart_stalled_receivers(CgwElement *webrtc) {
    /* Elements left behind in READY by their playing parent (seen: rtpbin's rtpstorage), whose
     * flushing pads stop the receive path: bring them up first. */
    GPtrArray *behind = g_ptr_array_new_with_free_func(gst_object_unref);
    if (GST_STATE(webrtc) == GST_STATE_PLAYING) cgw_for_each_element(GST_BIN(webrtc), collect_behind_parent, behind);
    for (guint i = 0; i < behind->len; i++) {
        if (g_getenv("CGW_DEBUG_RESTARTS") != NULL) g_printerr("cgw: behind %s state %d\n", GST_OBJECT_NAME(g_ptr_array_index(behind, i)), GST_STATE(g_ptr_array_index(behind, i)));
        gst_element_sync_state_with_parent(g_ptr_array_index(behind, i));
    }
    int count = (int)behind->len;
    g_ptr_array_unref(behind);

    GPtrArray *stalled = g_ptr_array_new_with_free_func(gst_object_unref);
    cgw_for_each_element(GST_BIN(webrtc), collect_stalled, stalled);
    /* Queues (downstream) first, then the ICE sources. */
    for (int pass = 0; pass < 2; pass++) {
        for (guint i = 0; i < stalled->len; i++) {
            GstElement *element = g_ptr_array_index(stalled, i);
            if (cgw_has_factory(element, "nicesrc") != (pass == 1)) continue;
            if (g_getenv("CGW_DEBUG_RESTARTS") != NULL) g_printerr("cgw: stalled %s\n", GST_OBJECT_NAME(element));
            gst_element_set_state(element, GST_STATE_READY);
            gst_element_set_state(element, GST_STATE_PLAYING);
        }
    }
    count += (int)stalled->len;
    g_ptr_array_unref(stalled);
    return count;
}

bool cgw_pad_request_key_unit_upstream(CgwPad *pad) {
    GstEvent *event = gst_video_event_new_upstream_force_key_unit(GST_CLOCK_TIME_NONE, TRUE, 0);
    return gst_pad_send_event(pad, event);
}

static GstPadProbeReturn key_unit_request_probe(GstPad *pad, GstPadProbeInfo *info, gpointer data) {
    (void)pad;
    CgwCallback *cb = data;
    GstEvent *event = GST_PAD_PROBE_INFO_EVENT(info);
    if (event != NULL && gst_video_event_is_force_key_unit(event)) {
        MARK_CALLBACK_THREAD();
        ((cgw_notify_fn)cb->fn)(cb->ctx);
    }
    return GST_PAD_PROBE_OK;
}

unsigned long cgw_pad_on_key_unit_request(CgwPad *pad, cgw_notify_fn fn, void *ctx, cgw_release_fn release) {
    if (pad == NULL) {
        if (release != NULL) release(ctx);
        return 0;
    }
    return gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_EVENT_UPSTREAM, key_unit_request_probe,
                             cgw_callback_new((void *)fn, ctx, release), cgw_callback_free);
}

static GstFlowReturn appsink_encoded_sample(GstAppSink *sink, gpointer data) {
    CgwCallback *cb = data;
    MARK_CALLBACK_THREAD();
    GstSample *sample = gst_app_sink_pull_sample(sink);
    if (sample == NULL) return GST_FLOW_EOS;
    GstBuffer *buffer = gst_sample_get_buffer(sample);
    GstMapInfo map;
    if (buffer != NULL && gst_buffer_map(buffer, &map, GST_MAP_READ)) {
        int64_t pts = GST_BUFFER_PTS_IS_VALID(buffer) ? (int64_t)GST_BUFFER_PTS(buffer) : -1;
        bool key = !GST_BUFFER_FLAG_IS_SET(buffer, GST_BUFFER_FLAG_DELTA_UNIT);
        ((cgw_encoded_fn)cb->fn)(cb->ctx, map.data, map.size, pts, key);
        gst_buffer_unmap(buffer, &map);
    }
    gst_sample_unref(sample);
    return GST_FLOW_OK;
}

bool cgw_appsink_on_buffer(CgwElement *appsink, cgw_encoded_fn fn, void *ctx, cgw_release_fn release) {
    if (appsink == NULL || !GST_IS_APP_SINK(appsink)) {
        if (release != NULL) release(ctx);
        return false;
    }
    GstAppSinkCallbacks callbacks = {0};
    callbacks.new_sample = appsink_encoded_sample;
    gst_app_sink_set_callbacks(GST_APP_SINK(appsink), &callbacks, cgw_callback_new((void *)fn, ctx, release), cgw_callback_free);
    return true;
}
