/* CGstWebRTC, the runtime part: callbacks, the shared GLib loop, pipelines, properties and the
 * bus. webrtcbin itself is in cgw_negotiation.c, media branches and probes in cgw_media.c; see
 * include/cgstwebrtc.h for the contract of each function. */
#include "cgw_internal.h"

CgwCallback *cgw_callback_new(void *fn, void *ctx, cgw_release_fn release) {
    CgwCallback *cb = g_new0(CgwCallback, 1);
    cb->fn = fn;
    cb->ctx = ctx;
    cb->release = release;
    return cb;
}

void cgw_callback_free(gpointer data) {
    CgwCallback *cb = data;
    if (cb == NULL) return;
    if (cb->release != NULL) cb->release(cb->ctx);
    g_free(cb);
}

void cgw_callback_free_closure(gpointer data, GClosure *closure) {
    (void)closure;
    cgw_callback_free(data);
}

/* Set on every thread that has run one of our trampolines (streaming threads, webrtcbin's thread,
 * the shared loop): tearing a pipeline down from such a thread would wait for itself. */
static _Thread_local bool thread_runs_callbacks = false;

bool cgw_current_thread_runs_gstreamer_callbacks(void) { return thread_runs_callbacks; }
void cgw_mark_callback_thread(void) { thread_runs_callbacks = true; }

void cgw_set_error(char **error_out, const char *message) {
    if (error_out != NULL) *error_out = g_strdup(message != NULL ? message : "unknown error");
}

void cgw_free(void *pointer) { g_free(pointer); }

/* ------------------------------------------------------------------------------------------------
 * Initialisation and the shared loop
 * ---------------------------------------------------------------------------------------------- */

/* GStreamer is initialised in one place for the whole process: CGstCore. */
/* SRTP's NSS first (before GStreamer's srtp plugin loads libsrtp, whose self-tests initialise it). */
bool cgw_initialize(char **error_out) {
    (void)cgw_prepare_srtp_crypto();
    return cgst_core_initialize(error_out);
}

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

/* A timer that fires on a grid of its interval (multiples of it on the monotonic clock), not at
 * start + k * interval: every timer of one interval fires in the same loop iteration, so a
 * process with N links wakes the loop (and polls every bus's descriptor) twice a second, not 2N
 * times (issue 24 item 5). */
typedef struct {
    GSource source;
    gint64 interval_us;
} AlignedTimer;

static gint64 next_grid_point(gint64 now_us, gint64 interval_us) { return (now_us / interval_us + 1) * interval_us; }

static gboolean aligned_timer_dispatch(GSource *source, GSourceFunc callback, gpointer data) {
    AlignedTimer *timer = (AlignedTimer *)source;
    g_source_set_ready_time(source, next_grid_point(g_source_get_time(source), timer->interval_us));
    return callback != NULL ? callback(data) : G_SOURCE_REMOVE;
}

static GSourceFuncs aligned_timer_funcs = {NULL, NULL, aligned_timer_dispatch, NULL, NULL, NULL};

unsigned cgw_shared_loop_add_timer(unsigned interval_ms, cgw_tick_fn tick, void *ctx, cgw_release_fn release) {
    cgw_shared_loop_start();
    GSource *source = g_source_new(&aligned_timer_funcs, sizeof(AlignedTimer));
    AlignedTimer *timer = (AlignedTimer *)source;
    timer->interval_us = (gint64)(interval_ms > 0 ? interval_ms : 1) * 1000;
    g_source_set_ready_time(source, next_grid_point(g_get_monotonic_time(), timer->interval_us));
    g_source_set_callback(source, timer_trampoline, cgw_callback_new((void *)tick, ctx, release), cgw_callback_free);
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
    g_source_set_callback(source, invoke_trampoline, cgw_callback_new((void *)fn, ctx, release), cgw_callback_free);
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

GParamSpec *cgw_find_property(void *object, const char *property) {
    if (object == NULL || !G_IS_OBJECT(object)) return NULL;
    return g_object_class_find_property(G_OBJECT_GET_CLASS(object), property);
}

bool cgw_object_set_string(void *object, const char *property, const char *value) {
    GParamSpec *spec = cgw_find_property(object, property);
    if (spec == NULL || spec->value_type != G_TYPE_STRING) return false;
    g_object_set(object, property, value, NULL);
    return true;
}

bool cgw_object_set_bool(void *object, const char *property, bool value) {
    GParamSpec *spec = cgw_find_property(object, property);
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
    GParamSpec *spec = cgw_find_property(object, property);
    return spec != NULL && set_number(object, property, spec, value, 0, true);
}

bool cgw_object_set_uint(void *object, const char *property, uint64_t value) {
    GParamSpec *spec = cgw_find_property(object, property);
    return spec != NULL && set_number(object, property, spec, 0, value, false);
}

bool cgw_object_set_from_string(void *object, const char *property, const char *value) {
    if (cgw_find_property(object, property) == NULL) return false;
    gst_util_set_object_arg(G_OBJECT(object), property, value);
    return true;
}

bool cgw_object_get_integer(void *object, const char *property, int64_t *value_out) {
    GParamSpec *spec = cgw_find_property(object, property);
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
                          cgw_callback_new((void *)on_message, ctx, release), cgw_callback_free);
    guint id = g_source_attach(source, loop_context);
    g_source_unref(source);
    gst_object_unref(bus);
    return id;
}
