/* CGstCore: see include/cgst_core.h for the contract of each function. */
#include "cgst_core.h"

#include <pthread.h>

#include <gst/gst.h>

static void set_error(char **error_out, const char *message) {
    if (error_out != NULL) *error_out = g_strdup(message != NULL ? message : "unknown error");
}

void cgst_core_free(void *pointer) { g_free(pointer); }

/* pthread_once rather than g_once_init_*: the same guarantee, and ThreadSanitizer sees it (GLib's
 * atomics are not instrumented, so it reported init_ok as a race; issue 10). */
static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static gboolean init_ok = FALSE;
static gchar *init_error = NULL;

static void initialize_once(void) {
    GError *err = NULL;
    init_ok = gst_init_check(NULL, NULL, &err);
    if (!init_ok) {
        init_error = g_strdup(err != NULL ? err->message : "gst_init_check failed");
        g_clear_error(&err);
    }
}

bool cgst_core_initialize(char **error_out) {
    pthread_once(&init_once, initialize_once);
    if (!init_ok) set_error(error_out, init_error);
    return init_ok;
}

CgstCoreElement *cgst_core_parse_launch(const char *description, char **error_out) {
    GError *err = NULL;
    GstElement *element = gst_parse_launch_full(description, NULL, GST_PARSE_FLAG_FATAL_ERRORS, &err);
    if (err != NULL) {
        set_error(error_out, err->message);
        g_clear_error(&err);
        if (element != NULL) gst_object_unref(element);
        return NULL;
    }
    if (element == NULL) {
        set_error(error_out, "gst_parse_launch returned nothing");
        return NULL;
    }
    return (CgstCoreElement *)element;
}
