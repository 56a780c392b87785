/* CGstWebRTC: see include/cgstwebrtc.h for the contract of each function. */
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

/* The header names webrtcbin's states without including GStreamer: each name must be GStreamer's. */
#define CGW_SAME_VALUE(ours, theirs) _Static_assert((int)(ours) == (int)(theirs), #ours " is not " #theirs)
CGW_SAME_VALUE(CGW_ICE_CONNECTION_NEW, GST_WEBRTC_ICE_CONNECTION_STATE_NEW);
CGW_SAME_VALUE(CGW_ICE_CONNECTION_CHECKING, GST_WEBRTC_ICE_CONNECTION_STATE_CHECKING);
CGW_SAME_VALUE(CGW_ICE_CONNECTION_CONNECTED, GST_WEBRTC_ICE_CONNECTION_STATE_CONNECTED);
CGW_SAME_VALUE(CGW_ICE_CONNECTION_COMPLETED, GST_WEBRTC_ICE_CONNECTION_STATE_COMPLETED);
CGW_SAME_VALUE(CGW_ICE_CONNECTION_FAILED, GST_WEBRTC_ICE_CONNECTION_STATE_FAILED);
CGW_SAME_VALUE(CGW_ICE_CONNECTION_DISCONNECTED, GST_WEBRTC_ICE_CONNECTION_STATE_DISCONNECTED);
CGW_SAME_VALUE(CGW_ICE_CONNECTION_CLOSED, GST_WEBRTC_ICE_CONNECTION_STATE_CLOSED);
CGW_SAME_VALUE(CGW_PEER_CONNECTION_NEW, GST_WEBRTC_PEER_CONNECTION_STATE_NEW);
CGW_SAME_VALUE(CGW_PEER_CONNECTION_CONNECTING, GST_WEBRTC_PEER_CONNECTION_STATE_CONNECTING);
CGW_SAME_VALUE(CGW_PEER_CONNECTION_CONNECTED, GST_WEBRTC_PEER_CONNECTION_STATE_CONNECTED);
CGW_SAME_VALUE(CGW_PEER_CONNECTION_DISCONNECTED, GST_WEBRTC_PEER_CONNECTION_STATE_DISCONNECTED);
CGW_SAME_VALUE(CGW_PEER_CONNECTION_FAILED, GST_WEBRTC_PEER_CONNECTION_STATE_FAILED);
CGW_SAME_VALUE(CGW_PEER_CONNECTION_CLOSED, GST_WEBRTC_PEER_CONNECTION_STATE_CLOSED);
CGW_SAME_VALUE(CGW_ICE_GATHERING_NEW, GST_WEBRTC_ICE_GATHERING_STATE_NEW);
CGW_SAME_VALUE(CGW_ICE_GATHERING_GATHERING, GST_WEBRTC_ICE_GATHERING_STATE_GATHERING);
CGW_SAME_VALUE(CGW_ICE_GATHERING_COMPLETE, GST_WEBRTC_ICE_GATHERING_STATE_COMPLETE);
CGW_SAME_VALUE(CGW_DTLS_NEW, GST_WEBRTC_DTLS_TRANSPORT_STATE_NEW);
CGW_SAME_VALUE(CGW_DTLS_CLOSED, GST_WEBRTC_DTLS_TRANSPORT_STATE_CLOSED);
CGW_SAME_VALUE(CGW_DTLS_FAILED, GST_WEBRTC_DTLS_TRANSPORT_STATE_FAILED);
CGW_SAME_VALUE(CGW_DTLS_CONNECTING, GST_WEBRTC_DTLS_TRANSPORT_STATE_CONNECTING);
CGW_SAME_VALUE(CGW_DTLS_CONNECTED, GST_WEBRTC_DTLS_TRANSPORT_STATE_CONNECTED);
CGW_SAME_VALUE(CGW_DATA_CHANNEL_CONNECTING, GST_WEBRTC_DATA_CHANNEL_STATE_CONNECTING);
CGW_SAME_VALUE(CGW_DATA_CHANNEL_OPEN, GST_WEBRTC_DATA_CHANNEL_STATE_OPEN);
CGW_SAME_VALUE(CGW_DATA_CHANNEL_CLOSING, GST_WEBRTC_DATA_CHANNEL_STATE_CLOSING);
CGW_SAME_VALUE(CGW_DATA_CHANNEL_CLOSED, GST_WEBRTC_DATA_CHANNEL_STATE_CLOSED);

/* ------------------------------------------------------------------------------------------------
 * A registered callback: the function, the caller's context, and the release that balances it.
 * Freed (and the context released) by the destroy notify of whatever holds it.
 * ---------------------------------------------------------------------------------------------- */
typedef struct {
    void *fn;
    void *ctx;
    cgw_release_fn release;
} CgwCallback;

static CgwCallback *callback_new(void *fn, void *ctx, cgw_release_fn release) {
    CgwCallback *cb = g_new0(CgwCallback, 1);
    cb->fn = fn;
    cb->ctx = ctx;
    cb->release = release;
    return cb;
}

static void callback_free(gpointer data) {
    CgwCallback *cb = data;
    if (cb == NULL) return;
    if (cb->release != NULL) cb->release(cb->ctx);
    g_free(cb);
}

static void callback_free_closure(gpointer data, GClosure *closure) {
    (void)closure;
    callback_free(data);
}

/* Set on every thread that has run one of our trampolines (streaming threads, webrtcbin's thread,
 * the shared loop): tearing a pipeline down from such a thread would wait for itself. */
static _Thread_local bool thread_runs_callbacks = false;
#define MARK_CALLBACK_THREAD() (thread_runs_callbacks = true)

bool cgw_current_thread_runs_gstreamer_callbacks(void) { return thread_runs_callbacks; }
void cgw_mark_callback_thread(void) { MARK_CALLBACK_THREAD(); }

static void set_error(char **error_out, const char *message) {
    if (error_out != NULL) *error_out = g_strdup(message != NULL ? message : "unknown error");
}

void cgw_free(void *pointer) { g_free(pointer); }

/* ------------------------------------------------------------------------------------------------
 * Initialisation and the shared loop
 * ---------------------------------------------------------------------------------------------- */

/* GStreamer is initialised in one place for the whole process: CGstCore. */
bool cgw_initialize(char **error_out) { return cgst_core_initialize(error_out); }

static GMainContext *loop_context = NULL;
static GMainLoop *loop_main = NULL;
static GThread *loop_thread = NULL;
static gsize loop_started = 0;

static gpointer loop_thread_main(gpointer data) {
    (void)data;
    MARK_CALLBACK_THREAD();
    g_main_context_push_thread_default(loop_context);
    g_main_loop_run(loop_main);
    g_main_context_pop_thread_default(loop_context);
    return NULL;
}

void cgw_shared_loop_start(void) {
    if (g_once_init_enter(&loop_started)) {
        loop_context = g_main_context_new();
        loop_main = g_main_loop_new(loop_context, FALSE);
        loop_thread = g_thread_new("cgw-glib-loop", loop_thread_main, NULL);
        g_once_init_leave(&loop_started, 1);
    }
}

bool cgw_on_shared_loop_thread(void) {
    return loop_thread != NULL && g_thread_self() == loop_thread;
}

static gboolean timer_trampoline(gpointer data) {
    CgwCallback *cb = data;
    MARK_CALLBACK_THREAD();
    return ((cgw_tick_fn)cb->fn)(cb->ctx) ? G_SOURCE_CONTINUE : G_SOURCE_REMOVE;
}

unsigned cgw_shared_loop_add_timer(unsigned interval_ms, cgw_tick_fn tick, void *ctx, cgw_release_fn release) {
    cgw_shared_loop_start();
    GSource *source = g_timeout_source_new(interval_ms);
    g_source_set_callback(source, timer_trampoline, callback_new((void *)tick, ctx, release), callback_free);
    guint id = g_source_attach(source, loop_context);
    g_source_unref(source);
    return id;
}

static gboolean invoke_trampoline(gpointer data) {
    CgwCallback *cb = data;
    MARK_CALLBACK_THREAD();
    ((cgw_call_fn)cb->fn)(cb->ctx);
    return G_SOURCE_REMOVE;
}

void cgw_shared_loop_invoke(cgw_call_fn fn, void *ctx, cgw_release_fn release) {
    cgw_shared_loop_start();
    GSource *source = g_idle_source_new();
    g_source_set_priority(source, G_PRIORITY_DEFAULT);
    g_source_set_callback(source, invoke_trampoline, callback_new((void *)fn, ctx, release), callback_free);
    g_source_attach(source, loop_context);
    g_source_unref(source);
}

void cgw_shared_loop_remove_source(unsigned source_id) {
    if (source_id == 0 || loop_context == NULL) return;
    GSource *source = g_main_context_find_source_by_id(loop_context, source_id);
    if (source != NULL) g_source_destroy(source);
}

bool cgw_element_factory_exists(const char *factory_name) {
    GstElementFactory *factory = gst_element_factory_find(factory_name);
    if (factory == NULL) return false;
    gst_object_unref(factory);
    return true;
}

char *cgw_local_interface_addresses(void) {
    struct ifaddrs *list = NULL;
    GString *out = g_string_new(NULL);
    if (getifaddrs(&list) != 0) return g_string_free(out, FALSE);
    for (struct ifaddrs *it = list; it != NULL; it = it->ifa_next) {
        if (it->ifa_addr == NULL || !(it->ifa_flags & IFF_UP)) continue;
        char text[INET6_ADDRSTRLEN] = {0};
        if (it->ifa_addr->sa_family == AF_INET) {
            struct sockaddr_in *sin = (struct sockaddr_in *)it->ifa_addr;
            if (inet_ntop(AF_INET, &sin->sin_addr, text, sizeof text) == NULL) continue;
        } else if (it->ifa_addr->sa_family == AF_INET6) {
            struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)it->ifa_addr;
            if (IN6_IS_ADDR_LINKLOCAL(&sin6->sin6_addr)) continue;
            if (inet_ntop(AF_INET6, &sin6->sin6_addr, text, sizeof text) == NULL) continue;
        } else {
            continue;
        }
        g_string_append(out, text);
        g_string_append_c(out, '\n');
    }
    freeifaddrs(list);
    return g_string_free(out, FALSE);
}

int64_t cgw_unix_time_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* ------------------------------------------------------------------------------------------------
 * Pipelines
 * ---------------------------------------------------------------------------------------------- */

static GMutex pipelines_lock;
static GHashTable *pipelines = NULL; /* GstElement* -> unused; entries removed on finalize */

static void pipeline_finalized(gpointer data, GObject *where_the_object_was) {
    (void)data;
    g_mutex_lock(&pipelines_lock);
    if (pipelines != NULL) g_hash_table_remove(pipelines, where_the_object_was);
    g_mutex_unlock(&pipelines_lock);
}

static CgwElement *pipeline_new(const char *description, bool counted, char **error_out);

CgwElement *cgw_pipeline_new_from_description(const char *description, char **error_out) {
    return pipeline_new(description, true, error_out);
}

CgwElement *cgw_pipeline_new_uncounted(const char *description, char **error_out) {
    return pipeline_new(description, false, error_out);
}

static CgwElement *pipeline_new(const char *description, bool counted, char **error_out) {
    GstElement *element = (GstElement *)cgst_core_parse_launch(description, error_out);
    if (element == NULL) return NULL;
    if (!GST_IS_PIPELINE(element)) {
        GstElement *pipeline = gst_pipeline_new(NULL);
        gst_bin_add(GST_BIN(pipeline), element);
        element = pipeline;
    }
    gst_object_ref_sink(element);
    if (!counted) return element;
    g_mutex_lock(&pipelines_lock);
    if (pipelines == NULL) pipelines = g_hash_table_new(g_direct_hash, g_direct_equal);
    g_hash_table_add(pipelines, element);
    g_mutex_unlock(&pipelines_lock);
    g_object_weak_ref(G_OBJECT(element), pipeline_finalized, NULL);
    return element;
}

CgwElement *cgw_bin_get_child(CgwElement *bin, const char *name) {
    if (bin == NULL || !GST_IS_BIN(bin)) return NULL;
    return gst_bin_get_by_name(GST_BIN(bin), name);
}

void cgw_element_unref(CgwElement *element) {
    if (element != NULL) gst_object_unref(element);
}

bool cgw_pipeline_play(CgwElement *pipeline) {
    if (gst_element_set_state(pipeline, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE) return false;
    /* Wait until every element plays: elements webrtcbin adds while its parent is still changing
     * state can be left behind. */
    return gst_element_get_state(pipeline, NULL, NULL, 5 * GST_SECOND) != GST_STATE_CHANGE_FAILURE;
}

void cgw_pipeline_stop(CgwElement *pipeline) {
    gst_element_set_state(pipeline, GST_STATE_NULL);
    gst_element_get_state(pipeline, NULL, NULL, GST_CLOCK_TIME_NONE);
}

int cgw_element_current_state(CgwElement *element) {
    GstState state = GST_STATE_VOID_PENDING;
    gst_element_get_state(element, &state, NULL, 0);
    return (int)state;
}

int64_t cgw_element_running_time_ns(CgwElement *element) {
    GstClock *clock = gst_element_get_clock(element);
    if (clock == NULL) return -1;
    GstClockTime now = gst_clock_get_time(clock);
    gst_object_unref(clock);
    GstClockTime base = gst_element_get_base_time(element);
    if (now == GST_CLOCK_TIME_NONE || base == GST_CLOCK_TIME_NONE || now < base) return -1;
    return (int64_t)(now - base);
}

char *cgw_pipeline_graph_dot(CgwElement *pipeline) {
    return gst_debug_bin_to_dot_data(GST_BIN(pipeline), GST_DEBUG_GRAPH_SHOW_ALL);
}

int cgw_live_pipeline_count(void) {
    int count = 0;
    g_mutex_lock(&pipelines_lock);
    if (pipelines != NULL) {
        GHashTableIter iter;
        gpointer key;
        g_hash_table_iter_init(&iter, pipelines);
        while (g_hash_table_iter_next(&iter, &key, NULL)) {
            GstElement *element = key;
            if (GST_STATE(element) != GST_STATE_NULL || GST_STATE_PENDING(element) != GST_STATE_VOID_PENDING) count++;
        }
    }
    g_mutex_unlock(&pipelines_lock);
    return count;
}

/* ------------------------------------------------------------------------------------------------
 * Properties
 * ---------------------------------------------------------------------------------------------- */

static GParamSpec *find_property(void *object, const char *property) {
    if (object == NULL || !G_IS_OBJECT(object)) return NULL;
    return g_object_class_find_property(G_OBJECT_GET_CLASS(object), property);
}

bool cgw_object_set_string(void *object, const char *property, const char *value) {
    GParamSpec *spec = find_property(object, property);
    if (spec == NULL || spec->value_type != G_TYPE_STRING) return false;
    g_object_set(object, property, value, NULL);
    return true;
}

bool cgw_object_set_bool(void *object, const char *property, bool value) {
    GParamSpec *spec = find_property(object, property);
    if (spec == NULL || spec->value_type != G_TYPE_BOOLEAN) return false;
    g_object_set(object, property, (gboolean)value, NULL);
    return true;
}

static bool set_number(void *object, const char *property, GParamSpec *spec, int64_t signed_value,
                       uint64_t unsigned_value, bool is_signed) {
    GValue value = G_VALUE_INIT;
    g_value_init(&value, spec->value_type);
    switch (G_TYPE_FUNDAMENTAL(spec->value_type)) {
    case G_TYPE_INT: g_value_set_int(&value, is_signed ? (gint)signed_value : (gint)unsigned_value); break;
    case G_TYPE_UINT: g_value_set_uint(&value, is_signed ? (guint)signed_value : (guint)unsigned_value); break;
    case G_TYPE_INT64: g_value_set_int64(&value, is_signed ? signed_value : (gint64)unsigned_value); break;
    case G_TYPE_UINT64: g_value_set_uint64(&value, is_signed ? (guint64)signed_value : unsigned_value); break;
    case G_TYPE_LONG: g_value_set_long(&value, is_signed ? (glong)signed_value : (glong)unsigned_value); break;
    case G_TYPE_ULONG: g_value_set_ulong(&value, is_signed ? (gulong)signed_value : (gulong)unsigned_value); break;
    case G_TYPE_ENUM: g_value_set_enum(&value, is_signed ? (gint)signed_value : (gint)unsigned_value); break;
    default: g_value_unset(&value); return false;
    }
    g_object_set_property(G_OBJECT(object), property, &value);
    g_value_unset(&value);
    return true;
}

bool cgw_object_set_int(void *object, const char *property, int64_t value) {
    GParamSpec *spec = find_property(object, property);
    return spec != NULL && set_number(object, property, spec, value, 0, true);
}

bool cgw_object_set_uint(void *object, const char *property, uint64_t value) {
    GParamSpec *spec = find_property(object, property);
    return spec != NULL && set_number(object, property, spec, 0, value, false);
}

bool cgw_object_set_from_string(void *object, const char *property, const char *value) {
    if (find_property(object, property) == NULL) return false;
    gst_util_set_object_arg(G_OBJECT(object), property, value);
    return true;
}

bool cgw_object_get_integer(void *object, const char *property, int64_t *value_out) {
    GParamSpec *spec = find_property(object, property);
    if (spec == NULL) return false;
    GValue value = G_VALUE_INIT;
    g_value_init(&value, spec->value_type);
    g_object_get_property(G_OBJECT(object), property, &value);
    bool ok = true;
    switch (G_TYPE_FUNDAMENTAL(spec->value_type)) {
    case G_TYPE_INT: *value_out = g_value_get_int(&value); break;
    case G_TYPE_UINT: *value_out = g_value_get_uint(&value); break;
    case G_TYPE_INT64: *value_out = g_value_get_int64(&value); break;
    case G_TYPE_UINT64: *value_out = (int64_t)g_value_get_uint64(&value); break;
    case G_TYPE_LONG: *value_out = g_value_get_long(&value); break;
    case G_TYPE_ULONG: *value_out = (int64_t)g_value_get_ulong(&value); break;
    case G_TYPE_ENUM: *value_out = g_value_get_enum(&value); break;
    case G_TYPE_BOOLEAN: *value_out = g_value_get_boolean(&value) ? 1 : 0; break;
    default: ok = false; break;
    }
    g_value_unset(&value);
    return ok;
}

/* ------------------------------------------------------------------------------------------------
 * Bus
 * ---------------------------------------------------------------------------------------------- */

static gboolean bus_trampoline(GstBus *bus, GstMessage *message, gpointer data) {
    (void)bus;
    CgwCallback *cb = data;
    MARK_CALLBACK_THREAD();
    cgw_bus_fn fn = (cgw_bus_fn)cb->fn;
    const char *source = GST_MESSAGE_SRC(message) != NULL ? GST_OBJECT_NAME(GST_MESSAGE_SRC(message)) : "";
    switch (GST_MESSAGE_TYPE(message)) {
    case GST_MESSAGE_ERROR:
    case GST_MESSAGE_WARNING: {
        GError *err = NULL;
        gchar *debug = NULL;
        bool is_error = GST_MESSAGE_TYPE(message) == GST_MESSAGE_ERROR;
        if (is_error) gst_message_parse_error(message, &err, &debug);
        else gst_message_parse_warning(message, &err, &debug);
        gchar *text = g_strdup_printf("%s%s%s", err != NULL ? err->message : "?", debug != NULL ? " | " : "",
                                      debug != NULL ? debug : "");
        fn(cb->ctx, is_error ? CGW_BUS_ERROR : CGW_BUS_WARNING, source != NULL ? source : "", text);
        g_free(text);
        g_clear_error(&err);
        g_free(debug);
        break;
    }
    case GST_MESSAGE_EOS:
        fn(cb->ctx, CGW_BUS_EOS, source != NULL ? source : "", "end of stream");
        break;
    default:
        break;
    }
    return G_SOURCE_CONTINUE;
}

unsigned cgw_bus_watch(CgwElement *pipeline, cgw_bus_fn on_message, void *ctx, cgw_release_fn release) {
    cgw_shared_loop_start();
    GstBus *bus = gst_element_get_bus(pipeline);
    GSource *source = gst_bus_create_watch(bus);
    g_source_set_callback(source, (GSourceFunc)(void (*)(void))bus_trampoline,
                          callback_new((void *)on_message, ctx, release), callback_free);
    guint id = g_source_attach(source, loop_context);
    g_source_unref(source);
    gst_object_unref(bus);
    return id;
}

/* ------------------------------------------------------------------------------------------------
 * webrtcbin: emitted signals and promises
 * ---------------------------------------------------------------------------------------------- */

static gchar *promise_error_text(GstPromise *promise, GstPromiseResult result) {
    if (result != GST_PROMISE_RESULT_REPLIED) return g_strdup_printf("promise not replied (result %d)", (int)result);
    const GstStructure *reply = gst_promise_get_reply(promise);
    if (reply == NULL) return NULL;
    if (gst_structure_has_field(reply, "error")) {
        GError *err = NULL;
        gst_structure_get(reply, "error", G_TYPE_ERROR, &err, NULL);
        gchar *text = g_strdup(err != NULL ? err->message : "error");
        g_clear_error(&err);
        return text;
    }
    return NULL;
}

static void sdp_promise_changed(GstPromise *promise, gpointer data, const char *field) {
    CgwCallback *cb = data;
    MARK_CALLBACK_THREAD();
    cgw_sdp_result_fn fn = (cgw_sdp_result_fn)cb->fn;
    GstPromiseResult result = gst_promise_wait(promise);
    gchar *error = promise_error_text(promise, result);
    if (error != NULL) {
        fn(cb->ctx, NULL, error);
        g_free(error);
        return;
    }
    const GstStructure *reply = gst_promise_get_reply(promise);
    GstWebRTCSessionDescription *desc = NULL;
    if (reply != NULL) gst_structure_get(reply, field, GST_TYPE_WEBRTC_SESSION_DESCRIPTION, &desc, NULL);
    if (desc == NULL || desc->sdp == NULL) {
        fn(cb->ctx, NULL, "no session description in the reply");
    } else {
        gchar *text = gst_sdp_message_as_text(desc->sdp);
        fn(cb->ctx, text, NULL);
        g_free(text);
    }
    if (desc != NULL) gst_webrtc_session_description_free(desc);
}

static void offer_promise_changed(GstPromise *promise, gpointer data) { sdp_promise_changed(promise, data, "offer"); }
static void answer_promise_changed(GstPromise *promise, gpointer data) { sdp_promise_changed(promise, data, "answer"); }

void cgw_webrtc_create_offer(CgwElement *webrtc, cgw_sdp_result_fn done, void *ctx, cgw_release_fn release) {
    GstPromise *promise = gst_promise_new_with_change_func(offer_promise_changed, callback_new((void *)done, ctx, release), callback_free);
    g_signal_emit_by_name(webrtc, "create-offer", NULL, promise);
    gst_promise_unref(promise);
}

void cgw_webrtc_create_answer(CgwElement *webrtc, cgw_sdp_result_fn done, void *ctx, cgw_release_fn release) {
    GstPromise *promise = gst_promise_new_with_change_func(answer_promise_changed, callback_new((void *)done, ctx, release), callback_free);
    g_signal_emit_by_name(webrtc, "create-answer", NULL, promise);
    gst_promise_unref(promise);
}

static void done_promise_changed(GstPromise *promise, gpointer data) {
    CgwCallback *cb = data;
    MARK_CALLBACK_THREAD();
    GstPromiseResult result = gst_promise_wait(promise);
    gchar *error = promise_error_text(promise, result);
    ((cgw_done_fn)cb->fn)(cb->ctx, error);
    g_free(error);
}

static bool set_description(CgwElement *webrtc, const char *signal, int sdp_type, const char *sdp,
                            cgw_done_fn done, void *ctx, cgw_release_fn release) {
    GstSDPMessage *message = NULL;
    if (gst_sdp_message_new(&message) != GST_SDP_OK) return false;
    if (gst_sdp_message_parse_buffer((const guint8 *)sdp, (guint)strlen(sdp), message) != GST_SDP_OK ||
        gst_sdp_message_medias_len(message) == 0) {
        gst_sdp_message_free(message);
        return false;
    }
    GstWebRTCSessionDescription *desc = gst_webrtc_session_description_new(
        sdp_type == CGW_SDP_OFFER ? GST_WEBRTC_SDP_TYPE_OFFER : GST_WEBRTC_SDP_TYPE_ANSWER, message);
    GstPromise *promise = gst_promise_new_with_change_func(done_promise_changed, callback_new((void *)done, ctx, release), callback_free);
    g_signal_emit_by_name(webrtc, signal, desc, promise);
    gst_promise_unref(promise);
    gst_webrtc_session_description_free(desc);
    return true;
}

bool cgw_webrtc_set_local_description(CgwElement *webrtc, int sdp_type, const char *sdp, cgw_done_fn done,
                                      void *ctx, cgw_release_fn release) {
    return set_description(webrtc, "set-local-description", sdp_type, sdp, done, ctx, release);
}

bool cgw_webrtc_set_remote_description(CgwElement *webrtc, int sdp_type, const char *sdp, cgw_done_fn done,
                                       void *ctx, cgw_release_fn release) {
    return set_description(webrtc, "set-remote-description", sdp_type, sdp, done, ctx, release);
}

void cgw_webrtc_add_ice_candidate(CgwElement *webrtc, unsigned sdp_mline_index, const char *candidate) {
    g_signal_emit_by_name(webrtc, "add-ice-candidate", sdp_mline_index, candidate);
}

static GstWebRTCRTPTransceiverDirection direction_from_int(int direction) {
    switch (direction) {
    case CGW_DIRECTION_INACTIVE: return GST_WEBRTC_RTP_TRANSCEIVER_DIRECTION_INACTIVE;
    case CGW_DIRECTION_SENDONLY: return GST_WEBRTC_RTP_TRANSCEIVER_DIRECTION_SENDONLY;
    case CGW_DIRECTION_RECVONLY: return GST_WEBRTC_RTP_TRANSCEIVER_DIRECTION_RECVONLY;
    default: return GST_WEBRTC_RTP_TRANSCEIVER_DIRECTION_SENDRECV;
    }
}

bool cgw_webrtc_add_transceiver(CgwElement *webrtc, int direction, const char *caps) {
    GstCaps *parsed = gst_caps_from_string(caps);
    if (parsed == NULL) return false;
    GstWebRTCRTPTransceiver *transceiver = NULL;
    g_signal_emit_by_name(webrtc, "add-transceiver", direction_from_int(direction), parsed, &transceiver);
    gst_caps_unref(parsed);
    if (transceiver == NULL) return false;
    gst_object_unref(transceiver);
    return true;
}

static GstWebRTCRTPTransceiver *transceiver_at(CgwElement *webrtc, int index) {
    GstWebRTCRTPTransceiver *transceiver = NULL;
    if (index < 0) return NULL;
    g_signal_emit_by_name(webrtc, "get-transceiver", index, &transceiver);
    return transceiver;
}

int cgw_webrtc_transceiver_count(CgwElement *webrtc) {
    GArray *transceivers = NULL;
    g_signal_emit_by_name(webrtc, "get-transceivers", &transceivers);
    if (transceivers == NULL) return 0;
    int count = (int)transceivers->len;
    g_array_unref(transceivers);
    return count;
}

bool cgw_webrtc_set_transceiver_direction(CgwElement *webrtc, int index, int direction) {
    GstWebRTCRTPTransceiver *transceiver = transceiver_at(webrtc, index);
    if (transceiver == NULL) return false;
    g_object_set(transceiver, "direction", direction_from_int(direction), NULL);
    gst_object_unref(transceiver);
    return true;
}

bool cgw_webrtc_set_transceiver_codec_preferences(CgwElement *webrtc, int index, const char *caps) {
    GstWebRTCRTPTransceiver *transceiver = transceiver_at(webrtc, index);
    if (transceiver == NULL) return false;
    GstCaps *parsed = gst_caps_from_string(caps);
    if (parsed == NULL) {
        gst_object_unref(transceiver);
        return false;
    }
    g_object_set(transceiver, "codec-preferences", parsed, NULL);
    gst_caps_unref(parsed);
    gst_object_unref(transceiver);
    return true;
}

int cgw_webrtc_transceiver_kind(CgwElement *webrtc, int index) {
    GstWebRTCRTPTransceiver *transceiver = transceiver_at(webrtc, index);
    if (transceiver == NULL) return 0;
    GstWebRTCKind kind = GST_WEBRTC_KIND_UNKNOWN;
    g_object_get(transceiver, "kind", &kind, NULL);
    gst_object_unref(transceiver);
    return kind == GST_WEBRTC_KIND_AUDIO ? 1 : kind == GST_WEBRTC_KIND_VIDEO ? 2 : 0;
}

int cgw_webrtc_transceiver_mline(CgwElement *webrtc, int index) {
    GstWebRTCRTPTransceiver *transceiver = transceiver_at(webrtc, index);
    if (transceiver == NULL) return -1;
    guint mline = G_MAXUINT;
    g_object_get(transceiver, "mlineindex", &mline, NULL);
    gst_object_unref(transceiver);
    return mline == G_MAXUINT ? -1 : (int)mline;
}

bool cgw_webrtc_add_turn_server(CgwElement *webrtc, const char *uri) {
    gboolean ok = FALSE;
    g_signal_emit_by_name(webrtc, "add-turn-server", uri, &ok);
    return ok;
}

bool cgw_webrtc_add_local_address(CgwElement *webrtc, const char *address) {
    GObject *ice = NULL;
    GObject *agent = NULL;
    bool ok = false;
    if (find_property(webrtc, "ice-agent") == NULL) return false;
    g_object_get(webrtc, "ice-agent", &ice, NULL);
    if (ice != NULL && find_property(ice, "agent") != NULL) g_object_get(ice, "agent", &agent, NULL);
    if (agent != NULL && NICE_IS_AGENT(agent)) {
        NiceAddress nice_address;
        nice_address_init(&nice_address);
        if (nice_address_set_from_string(&nice_address, address)) {
            ok = nice_agent_add_local_address(NICE_AGENT(agent), &nice_address);
        }
    }
    if (agent != NULL) g_object_unref(agent);
    if (ice != NULL) g_object_unref(ice);
    return ok;
}

bool cgw_webrtc_set_ice_protocols(CgwElement *webrtc, bool udp, bool tcp) {
    GObject *ice = NULL;
    if (find_property(webrtc, "ice-agent") == NULL) return false;
    g_object_get(webrtc, "ice-agent", &ice, NULL);
    bool ok = ice != NULL && find_property(ice, "ice-tcp") != NULL && find_property(ice, "ice-udp") != NULL;
    if (ok) g_object_set(ice, "ice-udp", (gboolean)udp, "ice-tcp", (gboolean)tcp, NULL);
    if (ice != NULL) g_object_unref(ice);
    return ok;
}

int cgw_webrtc_set_rtcp_interval(CgwElement *webrtc, unsigned interval_ms) {
    GstElement *rtpbin = cgw_bin_get_child(webrtc, "rtpbin");
    int changed = 0;
    if (rtpbin == NULL) return 0;
    for (guint session_id = 0; session_id < 4; session_id++) {
        GObject *session = NULL;
        g_signal_emit_by_name(rtpbin, "get-internal-session", session_id, &session);
        if (session == NULL) continue;
        if (find_property(session, "rtcp-min-interval") != NULL) {
            g_object_set(session, "rtcp-min-interval", (guint64)interval_ms * GST_MSECOND, NULL);
            changed++;
        }
        g_object_unref(session);
    }
    gst_object_unref(rtpbin);
    return changed;
}

/* ------------------------------------------------------------------------------------------------
 * Connected signals
 * ---------------------------------------------------------------------------------------------- */

static void on_ice_candidate_trampoline(GstElement *webrtc, guint mline, gchar *candidate, gpointer data) {
    (void)webrtc;
    CgwCallback *cb = data;
    MARK_CALLBACK_THREAD();
    ((cgw_ice_candidate_fn)cb->fn)(cb->ctx, mline, candidate != NULL ? candidate : "");
}

unsigned long cgw_connect_ice_candidate(CgwElement *webrtc, cgw_ice_candidate_fn fn, void *ctx, cgw_release_fn release) {
    return g_signal_connect_data(webrtc, "on-ice-candidate", G_CALLBACK(on_ice_candidate_trampoline),
                                 callback_new((void *)fn, ctx, release), callback_free_closure, 0);
}

static void on_notify_trampoline(GstElement *webrtc, gpointer data) {
    (void)webrtc;
    CgwCallback *cb = data;
    MARK_CALLBACK_THREAD();
    ((cgw_notify_fn)cb->fn)(cb->ctx);
}

unsigned long cgw_connect_negotiation_needed(CgwElement *webrtc, cgw_notify_fn fn, void *ctx, cgw_release_fn release) {
    return g_signal_connect_data(webrtc, "on-negotiation-needed", G_CALLBACK(on_notify_trampoline),
                                 callback_new((void *)fn, ctx, release), callback_free_closure, 0);
}

static void on_property_state_trampoline(GObject *object, GParamSpec *spec, gpointer data) {
    CgwCallback *cb = data;
    MARK_CALLBACK_THREAD();
    int64_t value = -1;
    if (!cgw_object_get_integer(object, spec->name, &value)) value = -1;
    ((cgw_state_fn)cb->fn)(cb->ctx, (int)value);
}

static unsigned long connect_notify(CgwElement *element, const char *signal, cgw_state_fn fn, void *ctx, cgw_release_fn release) {
    return g_signal_connect_data(element, signal, G_CALLBACK(on_property_state_trampoline),
                                 callback_new((void *)fn, ctx, release), callback_free_closure, 0);
}

unsigned long cgw_connect_ice_connection_state(CgwElement *webrtc, cgw_state_fn fn, void *ctx, cgw_release_fn release) {
    return connect_notify(webrtc, "notify::ice-connection-state", fn, ctx, release);
}

unsigned long cgw_connect_connection_state(CgwElement *webrtc, cgw_state_fn fn, void *ctx, cgw_release_fn release) {
    return connect_notify(webrtc, "notify::connection-state", fn, ctx, release);
}

unsigned long cgw_connect_ice_gathering_state(CgwElement *webrtc, cgw_state_fn fn, void *ctx, cgw_release_fn release) {
    return connect_notify(webrtc, "notify::ice-gathering-state", fn, ctx, release);
}

static void on_pad_added_trampoline(GstElement *element, GstPad *pad, gpointer data) {
    (void)element;
    CgwCallback *cb = data;
    MARK_CALLBACK_THREAD();
    if (GST_PAD_DIRECTION(pad) != GST_PAD_SRC) return;
    GstCaps *caps = gst_pad_get_current_caps(pad);
    if (caps == NULL) caps = gst_pad_query_caps(pad, NULL);
    const char *media = "";
    const char *encoding = "";
    if (caps != NULL && gst_caps_get_size(caps) > 0) {
        GstStructure *s = gst_caps_get_structure(caps, 0);
        const char *m = gst_structure_get_string(s, "media");
        const char *e = gst_structure_get_string(s, "encoding-name");
        if (m != NULL) media = m;
        if (e != NULL) encoding = e;
    }
    ((cgw_pad_added_fn)cb->fn)(cb->ctx, pad, media, encoding);
    if (caps != NULL) gst_caps_unref(caps);
}

unsigned long cgw_connect_pad_added(CgwElement *element, cgw_pad_added_fn fn, void *ctx, cgw_release_fn release) {
    return g_signal_connect_data(element, "pad-added", G_CALLBACK(on_pad_added_trampoline),
                                 callback_new((void *)fn, ctx, release), callback_free_closure, 0);
}

unsigned long cgw_connect_dtls_transport_state(CgwElement *webrtc, cgw_state_fn fn, void *ctx, cgw_release_fn release,
                                               void **transport_out) {
    *transport_out = NULL;
    int count = cgw_webrtc_transceiver_count(webrtc);
    for (int i = 0; i < count; i++) {
        GstWebRTCRTPTransceiver *transceiver = transceiver_at(webrtc, i);
        if (transceiver == NULL) continue;
        GstWebRTCRTPSender *sender = NULL;
        GstWebRTCRTPReceiver *receiver = NULL;
        GstWebRTCDTLSTransport *transport = NULL;
        g_object_get(transceiver, "sender", &sender, "receiver", &receiver, NULL);
        if (sender != NULL) g_object_get(sender, "transport", &transport, NULL);
        if (transport == NULL && receiver != NULL) g_object_get(receiver, "transport", &transport, NULL);
        if (sender != NULL) gst_object_unref(sender);
        if (receiver != NULL) gst_object_unref(receiver);
        gst_object_unref(transceiver);
        if (transport != NULL) {
            *transport_out = transport; /* the caller's reference: cgw_object_unref */
            return connect_notify((CgwElement *)transport, "notify::state", fn, ctx, release);
        }
    }
    if (release != NULL) release(ctx);
    return 0;
}

void *cgw_object_ref(void *object) { return object != NULL ? g_object_ref(object) : NULL; }

void cgw_object_unref(void *object) {
    if (object != NULL) g_object_unref(object);
}

void cgw_signal_disconnect(void *object, unsigned long handler_id) {
    if (object != NULL && handler_id != 0 && g_signal_handler_is_connected(object, handler_id)) {
        g_signal_handler_disconnect(object, handler_id);
    }
}

/* ------------------------------------------------------------------------------------------------
 * Receive branches, frames, snapshots
 * ---------------------------------------------------------------------------------------------- */

CgwElement *cgw_bin_new_from_description(const char *description, char **error_out) {
    GError *err = NULL;
    GstElement *bin = gst_parse_bin_from_description(description, TRUE, &err);
    if (err != NULL || bin == NULL) {
        set_error(error_out, err != NULL ? err->message : "could not build the bin");
        g_clear_error(&err);
        if (bin != NULL) gst_object_unref(bin);
        return NULL;
    }
    return gst_object_ref_sink(bin);
}

bool cgw_link_pad_to_bin(CgwElement *pipeline, CgwPad *pad, CgwElement *bin, char **error_out) {
    if (!gst_bin_add(GST_BIN(pipeline), bin)) {
        set_error(error_out, "could not add the bin to the pipeline");
        return false;
    }
    GstPad *sink = gst_element_get_static_pad(bin, "sink");
    if (sink == NULL) {
        set_error(error_out, "the bin has no sink pad");
        gst_bin_remove(GST_BIN(pipeline), bin);
        return false;
    }
    gst_element_sync_state_with_parent(bin);
    GstPadLinkReturn linked = gst_pad_link(pad, sink);
    gst_object_unref(sink);
    if (linked != GST_PAD_LINK_OK) {
        gchar *text = g_strdup_printf("pad link failed (%d)", (int)linked);
        set_error(error_out, text);
        g_free(text);
        gst_element_set_state(bin, GST_STATE_NULL);
        gst_bin_remove(GST_BIN(pipeline), bin);
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

bool cgw_appsink_on_video_frame(CgwElement *appsink, cgw_video_frame_fn fn, void *ctx, cgw_release_fn release) {
    if (appsink == NULL || !GST_IS_APP_SINK(appsink)) {
        if (release != NULL) release(ctx);
        return false;
    }
    GstAppSinkCallbacks callbacks = {0};
    callbacks.new_sample = appsink_video_sample;
    gst_app_sink_set_callbacks(GST_APP_SINK(appsink), &callbacks, callback_new((void *)fn, ctx, release), callback_free);
    return true;
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
    if (appsink == NULL || !GST_IS_APP_SINK(appsink)) {
        if (release != NULL) release(ctx);
        return false;
    }
    GstAppSinkCallbacks callbacks = {0};
    callbacks.new_sample = appsink_counted_sample;
    gst_app_sink_set_callbacks(GST_APP_SINK(appsink), &callbacks, callback_new((void *)fn, ctx, release), callback_free);
    return true;
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
        set_error(error_out, err != NULL ? err->message : "conversion to JPEG failed");
        g_clear_error(&err);
        return false;
    }
    GstBuffer *buffer = gst_sample_get_buffer(converted);
    GstMapInfo map;
    if (buffer == NULL || !gst_buffer_map(buffer, &map, GST_MAP_READ)) {
        gst_sample_unref(converted);
        set_error(error_out, "JPEG buffer unreadable");
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
                             callback_new((void *)fn, ctx, release), callback_free);
}

/* Calls visit(element, data) for every element inside a bin, recursively. */
static void for_each_element(GstBin *bin, void (*visit)(GstElement *, gpointer), gpointer data) {
    GstIterator *it = gst_bin_iterate_recurse(bin);
    GValue item = G_VALUE_INIT;
    gboolean done = FALSE;
    while (!done) {
        switch (gst_iterator_next(it, &item)) {
        case GST_ITERATOR_OK:
            visit(g_value_get_object(&item), data);
            g_value_reset(&item);
            break;
        case GST_ITERATOR_RESYNC:
            gst_iterator_resync(it);
            break;
        default:
            done = TRUE;
            break;
        }
    }
    g_value_unset(&item);
    gst_iterator_free(it);
}

static bool has_factory(GstElement *element, const char *name) {
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
    for_each_element(GST_BIN(webrtc), probe_rtcp_of_receive_bin, &search);
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
    if (has_factory(element, "nicesrc") ||
        (has_factory(element, "queue") && parent_type_is(element, "TransportReceiveBin"))) {
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
    if (GST_STATE(webrtc) == GST_STATE_PLAYING) for_each_element(GST_BIN(webrtc), collect_behind_parent, behind);
    for (guint i = 0; i < behind->len; i++) {
        if (g_getenv("CGW_DEBUG_RESTARTS") != NULL) g_printerr("cgw: behind %s state %d\n", GST_OBJECT_NAME(g_ptr_array_index(behind, i)), GST_STATE(g_ptr_array_index(behind, i)));
        gst_element_sync_state_with_parent(g_ptr_array_index(behind, i));
    }
    int count = (int)behind->len;
    g_ptr_array_unref(behind);

    GPtrArray *stalled = g_ptr_array_new_with_free_func(gst_object_unref);
    for_each_element(GST_BIN(webrtc), collect_stalled, stalled);
    /* Queues (downstream) first, then the ICE sources. */
    for (int pass = 0; pass < 2; pass++) {
        for (guint i = 0; i < stalled->len; i++) {
            GstElement *element = g_ptr_array_index(stalled, i);
            if (has_factory(element, "nicesrc") != (pass == 1)) continue;
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
                             callback_new((void *)fn, ctx, release), callback_free);
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
    gst_app_sink_set_callbacks(GST_APP_SINK(appsink), &callbacks, callback_new((void *)fn, ctx, release), callback_free);
    return true;
}
