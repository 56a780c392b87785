/* CGstWebRTC data channels (PROTOCOL.md 7, the `fmp4Stream` channel): webrtcbin's
 * create-data-channel and on-data-channel, and one channel's events and sends. See
 * include/cgstwebrtc.h ("Data channels") for the contract of each function. */
#define GST_USE_UNSTABLE_API 1
#include "cgstwebrtc.h"

#include <gst/gst.h>
#include <gst/webrtc/webrtc.h>

typedef struct {
    void *fn;
    void *ctx;
    cgw_release_fn release;
} CgwDataChannelCallback;

static CgwDataChannelCallback *dc_callback_new(void *fn, void *ctx, cgw_release_fn release) {
    CgwDataChannelCallback *cb = g_new0(CgwDataChannelCallback, 1);
    cb->fn = fn;
    cb->ctx = ctx;
    cb->release = release;
    return cb;
}

static void dc_callback_free(gpointer data, GClosure *closure) {
    (void)closure;
    CgwDataChannelCallback *cb = data;
    if (cb == NULL) return;
    if (cb->release != NULL) cb->release(cb->ctx);
    g_free(cb);
}

static gchar *channel_label(GObject *channel) {
    gchar *label = NULL;
    g_object_get(channel, "label", &label, NULL);
    return label;
}

/* ---- webrtcbin ---- */

static void on_data_channel_trampoline(GstElement *webrtc, GObject *channel, gpointer data) {
    (void)webrtc;
    CgwDataChannelCallback *cb = data;
    cgw_mark_callback_thread();
    gchar *label = channel_label(channel);
    ((cgw_data_channel_fn)cb->fn)(cb->ctx, g_object_ref(channel), label != NULL ? label : "");
    g_free(label);
}

unsigned long cgw_connect_data_channel(CgwElement *webrtc, cgw_data_channel_fn fn, void *ctx, cgw_release_fn release) {
    return g_signal_connect_data(webrtc, "on-data-channel", G_CALLBACK(on_data_channel_trampoline),
                                 dc_callback_new((void *)fn, ctx, release), dc_callback_free, 0);
}

void *cgw_webrtc_create_data_channel(CgwElement *webrtc, const char *label, bool ordered) {
    if (webrtc == NULL || label == NULL) return NULL;
    GstStructure *options = gst_structure_new("options", "ordered", G_TYPE_BOOLEAN, ordered ? TRUE : FALSE, NULL);
    GObject *channel = NULL;
    g_signal_emit_by_name(webrtc, "create-data-channel", label, options, &channel);
    gst_structure_free(options);
    return channel;
}

/* ---- One channel ---- */

static void on_channel_event_trampoline(GObject *channel, gpointer data) {
    (void)channel;
    CgwDataChannelCallback *cb = data;
    cgw_mark_callback_thread();
    ((cgw_notify_fn)cb->fn)(cb->ctx);
}

static void on_channel_error_trampoline(GObject *channel, GError *error, gpointer data) {
    (void)channel;
    CgwDataChannelCallback *cb = data;
    cgw_mark_callback_thread();
    ((cgw_data_channel_text_fn)cb->fn)(cb->ctx, error != NULL && error->message != NULL ? error->message : "unknown error");
}

static void on_channel_string_trampoline(GObject *channel, gchar *text, gpointer data) {
    (void)channel;
    CgwDataChannelCallback *cb = data;
    cgw_mark_callback_thread();
    ((cgw_data_channel_text_fn)cb->fn)(cb->ctx, text != NULL ? text : "");
}

static void on_channel_data_trampoline(GObject *channel, GBytes *bytes, gpointer data) {
    (void)channel;
    CgwDataChannelCallback *cb = data;
    cgw_mark_callback_thread();
    gsize length = 0;
    const guint8 *pointer = bytes != NULL ? g_bytes_get_data(bytes, &length) : NULL;
    ((cgw_data_channel_bytes_fn)cb->fn)(cb->ctx, pointer, pointer != NULL ? length : 0);
}

static unsigned long connect_channel(void *channel, const char *signal, GCallback trampoline, void *fn, void *ctx,
                                     cgw_release_fn release) {
    if (channel == NULL) {
        if (release != NULL) release(ctx);
        return 0;
    }
    return g_signal_connect_data(channel, signal, trampoline, dc_callback_new(fn, ctx, release), dc_callback_free, 0);
}

unsigned long cgw_data_channel_on_open(void *channel, cgw_notify_fn fn, void *ctx, cgw_release_fn release) {
    return connect_channel(channel, "on-open", G_CALLBACK(on_channel_event_trampoline), (void *)fn, ctx, release);
}

unsigned long cgw_data_channel_on_close(void *channel, cgw_notify_fn fn, void *ctx, cgw_release_fn release) {
    return connect_channel(channel, "on-close", G_CALLBACK(on_channel_event_trampoline), (void *)fn, ctx, release);
}

unsigned long cgw_data_channel_on_error(void *channel, cgw_data_channel_text_fn fn, void *ctx, cgw_release_fn release) {
    return connect_channel(channel, "on-error", G_CALLBACK(on_channel_error_trampoline), (void *)fn, ctx, release);
}

unsigned long cgw_data_channel_on_text(void *channel, cgw_data_channel_text_fn fn, void *ctx, cgw_release_fn release) {
    return connect_channel(channel, "on-message-string", G_CALLBACK(on_channel_string_trampoline), (void *)fn, ctx,
                           release);
}

unsigned long cgw_data_channel_on_bytes(void *channel, cgw_data_channel_bytes_fn fn, void *ctx, cgw_release_fn release) {
    return connect_channel(channel, "on-message-data", G_CALLBACK(on_channel_data_trampoline), (void *)fn, ctx,
                           release);
}

int cgw_data_channel_ready_state(void *channel) {
    if (channel == NULL) return 0;
    GstWebRTCDataChannelState state = 0;
    g_object_get(channel, "ready-state", &state, NULL);
    return (int)state;
}

uint64_t cgw_data_channel_buffered_amount(void *channel) {
    if (channel == NULL) return 0;
    guint64 amount = 0;
    g_object_get(channel, "buffered-amount", &amount, NULL);
    return amount;
}

bool cgw_data_channel_send_text(void *channel, const char *text) {
    if (channel == NULL || text == NULL) return false;
    if (cgw_data_channel_ready_state(channel) != GST_WEBRTC_DATA_CHANNEL_STATE_OPEN) return false;
    g_signal_emit_by_name(channel, "send-string", text);
    return true;
}

bool cgw_data_channel_send_bytes(void *channel, const uint8_t *bytes, size_t length) {
    if (channel == NULL || (bytes == NULL && length > 0)) return false;
    if (cgw_data_channel_ready_state(channel) != GST_WEBRTC_DATA_CHANNEL_STATE_OPEN) return false;
    GBytes *data = g_bytes_new(bytes, length);
    g_signal_emit_by_name(channel, "send-data", data);
    g_bytes_unref(data);
    return true;
}

void cgw_data_channel_close(void *channel) {
    if (channel == NULL) return;
    int state = cgw_data_channel_ready_state(channel);
    if (state == GST_WEBRTC_DATA_CHANNEL_STATE_OPEN || state == GST_WEBRTC_DATA_CHANNEL_STATE_CONNECTING) {
        g_signal_emit_by_name(channel, "close");
    }
}
