#include "chttp_transfer.h"

#include <curl/curl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

static pthread_once_t global_once = PTHREAD_ONCE_INIT;
static CURLcode global_result = CURLE_FAILED_INIT;
static void global_init(void) { global_result = curl_global_init(CURL_GLOBAL_DEFAULT); }

static size_t header_callback(char *data, size_t size, size_t count, void *user) {
    const chttp_callbacks *callbacks = user;
    size_t length = size * count, line = length;
    while (line > 0 && (data[line - 1] == '\n' || data[line - 1] == '\r')) line--;
    return callbacks->on_header(callbacks->context, data, line) ? length : 0;
}

static size_t body_callback(char *data, size_t size, size_t count, void *user) {
    const chttp_callbacks *callbacks = user;
    size_t length = size * count;
    return callbacks->on_body(callbacks->context, (const uint8_t *)data, length) ? length : 0;
}

static int progress_callback(void *user, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow) {
    (void)dltotal; (void)dlnow; (void)ultotal; (void)ulnow;
    const chttp_callbacks *callbacks = user;
    return callbacks->keep_going(callbacks->context) ? 0 : 1;
}

int chttp_perform(const chttp_request *request, const chttp_callbacks *callbacks, long *status, char *error,
                  size_t error_size) {
    char message[CURL_ERROR_SIZE] = {0};
    *status = 0;
    pthread_once(&global_once, global_init);
    CURLcode code = global_result;
    CURL *curl = code == CURLE_OK ? curl_easy_init() : NULL;
    struct curl_slist *headers = NULL;
    if (curl == NULL) {
        if (code == CURLE_OK) code = CURLE_FAILED_INIT;
        snprintf(message, sizeof message, "libcurl could not start a transfer");
        goto done;
    }
    for (size_t i = 0; i < request->header_count; i++) {
        struct curl_slist *next = curl_slist_append(headers, request->headers[i]);
        if (next == NULL) { code = CURLE_OUT_OF_MEMORY; goto done; }
        headers = next;
    }
    /* No "Expect: 100-continue" round trip before a body. */
    struct curl_slist *next = curl_slist_append(headers, "Expect:");
    if (next == NULL) { code = CURLE_OUT_OF_MEMORY; goto done; }
    headers = next;
    curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, message);
    curl_easy_setopt(curl, CURLOPT_URL, request->url);
    curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, request->method);
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
    if (request->body_length > 0 || strcmp(request->method, "POST") == 0 || strcmp(request->method, "PUT") == 0
        || strcmp(request->method, "PATCH") == 0) {
        curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)request->body_length);
        curl_easy_setopt(curl, CURLOPT_POSTFIELDS, request->body_length > 0 ? (const char *)request->body : "");
        /* POSTFIELDS makes a POST; CUSTOMREQUEST above keeps the method asked for. */
    } else if (strcmp(request->method, "HEAD") == 0) {
        curl_easy_setopt(curl, CURLOPT_NOBODY, 1L);
    }
    if (request->timeout_ms > 0) curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, request->timeout_ms);
    if (request->tls12_minimum) curl_easy_setopt(curl, CURLOPT_SSLVERSION, (long)CURL_SSLVERSION_TLSv1_2);
    if (request->ca_pem != NULL) {
        struct curl_blob blob = {(void *)request->ca_pem, request->ca_pem_length, CURL_BLOB_COPY};
        curl_easy_setopt(curl, CURLOPT_CAINFO_BLOB, &blob);
        curl_easy_setopt(curl, CURLOPT_CAPATH, NULL);
    }
    curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, header_callback);
    curl_easy_setopt(curl, CURLOPT_HEADERDATA, (void *)callbacks);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, body_callback);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, (void *)callbacks);
    curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, progress_callback);
    curl_easy_setopt(curl, CURLOPT_XFERINFODATA, (void *)callbacks);
    curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
    code = curl_easy_perform(curl);
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, status);
done:
    if (code != CURLE_OK && error != NULL && error_size > 0) {
        snprintf(error, error_size, "%s", message[0] != 0 ? message : curl_easy_strerror(code));
    }
    curl_slist_free_all(headers);
    if (curl != NULL) curl_easy_cleanup(curl);
    return (int)code;
}
