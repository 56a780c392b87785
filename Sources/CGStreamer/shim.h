#ifndef IPCEMU_CGSTREAMER_SHIM_H
#define IPCEMU_CGSTREAMER_SHIM_H
/*
 * GStreamer for Swift (DESIGN.md interop rules): the headers, plus small wrappers named by what they
 * do for what Swift cannot call directly (cast macros such as GST_ELEMENT / GST_APP_SRC, variadic
 * functions, GError handling). Header-only: every wrapper is `static inline`. Generic on purpose:
 * nothing here knows about cameras or WebRTC; add wrappers, do not specialise these.
 *
 * Initialising GStreamer and parsing a pipeline description are not here but in CGstCore
 * (cgst_core.h), which CGstWebRTC shares: one gst_init_check for the whole process.
 */
#include <gst/gst.h>
#include <gst/app/gstappsrc.h>
#include <gst/app/gstappsink.h>
#include <gst/video/video.h>
#include <stdint.h>
#include <string.h>

/* A named element inside a bin (a new reference, or NULL). */
static inline GstElement *cgst_bin_get_element(GstElement *bin, const char *name) {
    if (!GST_IS_BIN(bin)) return NULL;
    return gst_bin_get_by_name(GST_BIN(bin), name);
}

/* gst_element_set_state; returns the GstStateChangeReturn as an int (0 failure, 1 success,
 * 2 async, 3 no preroll). */
static inline int cgst_element_set_state(GstElement *element, int state) {
    return (int)gst_element_set_state(element, (GstState)state);
}
static const int CGST_STATE_NULL = GST_STATE_NULL;
static const int CGST_STATE_READY = GST_STATE_READY;
static const int CGST_STATE_PAUSED = GST_STATE_PAUSED;
static const int CGST_STATE_PLAYING = GST_STATE_PLAYING;

static inline void cgst_object_unref(void *object) {
    if (object) gst_object_unref(object);
}

/* appsrc: copy `size` bytes into a new buffer with the given timestamps (nanoseconds; pass
 * UINT64_MAX for "none") and push it. Returns the GstFlowReturn (0 = OK). */
static inline int cgst_app_src_push_copy(GstElement *appsrc, const void *bytes, size_t size,
                                         uint64_t pts_ns, uint64_t duration_ns) {
    GstBuffer *buffer = gst_buffer_new_allocate(NULL, size, NULL);
    if (buffer == NULL) return (int)GST_FLOW_ERROR;
    gst_buffer_fill(buffer, 0, bytes, size);
    GST_BUFFER_PTS(buffer) = pts_ns == UINT64_MAX ? GST_CLOCK_TIME_NONE : pts_ns;
    GST_BUFFER_DTS(buffer) = GST_CLOCK_TIME_NONE;
    GST_BUFFER_DURATION(buffer) = duration_ns == UINT64_MAX ? GST_CLOCK_TIME_NONE : duration_ns;
    return (int)gst_app_src_push_buffer(GST_APP_SRC(appsrc), buffer);
}

/* appsrc: caps as a string ("video/x-raw,format=I420,width=...") and end of stream. */
static inline int cgst_app_src_set_caps_string(GstElement *appsrc, const char *caps_string) {
    GstCaps *caps = gst_caps_from_string(caps_string);
    if (caps == NULL) return 0;
    gst_app_src_set_caps(GST_APP_SRC(appsrc), caps);
    gst_caps_unref(caps);
    return 1;
}
static inline int cgst_app_src_end_of_stream(GstElement *appsrc) {
    return (int)gst_app_src_end_of_stream(GST_APP_SRC(appsrc));
}

/* appsink: wait up to timeout_ns for a sample (NULL on timeout or end of stream). */
static inline GstSample *cgst_app_sink_pull(GstElement *appsink, uint64_t timeout_ns) {
    return gst_app_sink_try_pull_sample(GST_APP_SINK(appsink), (GstClockTime)timeout_ns);
}
static inline int cgst_app_sink_is_eos(GstElement *appsink) {
    return gst_app_sink_is_eos(GST_APP_SINK(appsink)) ? 1 : 0;
}

/* A sample's bytes: copies at most `capacity` bytes into `out` and returns the buffer's full
 * size (call with capacity 0 to learn it). */
static inline size_t cgst_sample_copy_bytes(GstSample *sample, void *out, size_t capacity) {
    GstBuffer *buffer = gst_sample_get_buffer(sample);
    if (buffer == NULL) return 0;
    size_t size = gst_buffer_get_size(buffer);
    if (out != NULL && capacity > 0) gst_buffer_extract(buffer, 0, out, capacity < size ? capacity : size);
    return size;
}

/* A sample's presentation timestamp in nanoseconds, or UINT64_MAX. */
static inline uint64_t cgst_sample_pts(GstSample *sample) {
    GstBuffer *buffer = gst_sample_get_buffer(sample);
    if (buffer == NULL || !GST_BUFFER_PTS_IS_VALID(buffer)) return UINT64_MAX;
    return GST_BUFFER_PTS(buffer);
}

/* A raw video sample's layout from its caps: width, height, and per plane (up to 4) stride and
 * offset. Returns the number of planes, or 0 when the caps are not raw video. */
static inline int cgst_sample_video_layout(GstSample *sample, int *width, int *height,
                                           int strides[4], size_t offsets[4]) {
    GstCaps *caps = gst_sample_get_caps(sample);
    if (caps == NULL) return 0;
    GstVideoInfo info;
    if (!gst_video_info_from_caps(&info, caps)) return 0;
    *width = GST_VIDEO_INFO_WIDTH(&info);
    *height = GST_VIDEO_INFO_HEIGHT(&info);
    int planes = (int)GST_VIDEO_INFO_N_PLANES(&info);
    for (int i = 0; i < 4; i++) {
        strides[i] = i < planes ? GST_VIDEO_INFO_PLANE_STRIDE(&info, i) : 0;
        offsets[i] = i < planes ? GST_VIDEO_INFO_PLANE_OFFSET(&info, i) : 0;
    }
    return planes;
}

static inline void cgst_sample_unref(GstSample *sample) {
    if (sample) gst_sample_unref(sample);
}

/* The first error (or end of stream) waiting on the pipeline's bus, without blocking longer than
 * timeout_ns. Returns 0 nothing, 1 end of stream, 2 error (message in *error_out, g_free it). */
static inline int cgst_bus_poll_error(GstElement *pipeline, uint64_t timeout_ns, char **error_out) {
    GstBus *bus = gst_element_get_bus(pipeline);
    if (bus == NULL) return 0;
    GstMessage *message = gst_bus_timed_pop_filtered(bus, (GstClockTime)timeout_ns,
                                                     (GstMessageType)(GST_MESSAGE_ERROR | GST_MESSAGE_EOS));
    gst_object_unref(bus);
    if (message == NULL) return 0;
    int result = 1;
    if (GST_MESSAGE_TYPE(message) == GST_MESSAGE_ERROR) {
        GError *error = NULL;
        gchar *debug = NULL;
        gst_message_parse_error(message, &error, &debug);
        if (error_out) {
            const char *source = GST_MESSAGE_SRC(message) ? GST_OBJECT_NAME(GST_MESSAGE_SRC(message)) : "?";
            *error_out = g_strdup_printf("%s: %s", source, error ? error->message : "unknown error");
        }
        if (error) g_error_free(error);
        g_free(debug);
        result = 2;
    }
    gst_message_unref(message);
    return result;
}

/* Is an element factory installed (a plugin present)? */
static inline int cgst_element_factory_exists(const char *name) {
    GstElementFactory *factory = gst_element_factory_find(name);
    if (factory == NULL) return 0;
    gst_object_unref(factory);
    return 1;
}

static inline void cgst_free(void *pointer) { g_free(pointer); }

#endif
