#ifndef IPCEMU_CHTTP_TRANSFER_H
#define IPCEMU_CHTTP_TRANSFER_H
/*
 * One HTTP(S) request over the system's libcurl, for the cloud join's HTTPS, the pushes and the
 * CLI's control API client (HTTPTransfer wraps it). Blocking: run it on a thread of its own. The
 * final response's header lines and its body reach the callbacks as they arrive; a callback that
 * returns 0 stops the transfer. No curl header here: Swift sees only these declarations.
 */
#include <stddef.h>
#include <stdint.h>

typedef struct chttp_callbacks {
    void *context;
    /* One header line (the status line included) without its line end; an empty line ends a
     * response's headers (a 1xx response's too). */
    int (*on_header)(void *context, const char *line, size_t length);
    int (*on_body)(void *context, const uint8_t *bytes, size_t length);
    /* Asked about once a second, data or not: 0 stops the transfer (the caller gave up). */
    int (*keep_going)(void *context);
} chttp_callbacks;

typedef struct chttp_request {
    const char *method;
    const char *url;
    /* "Name: value" lines. */
    const char *const *headers;
    size_t header_count;
    const uint8_t *body;
    size_t body_length;
    /* PEM of the only CA to trust; NULL: the system's CAs. */
    const char *ca_pem;
    size_t ca_pem_length;
    /* The whole transfer, connection included; 0: no limit. */
    long timeout_ms;
    int tls12_minimum;
} chttp_request;

/* 0 when the transfer completed (whatever the HTTP status), else libcurl's error code with its
 * message in `error` (`error_size` bytes at most, NUL-terminated). `status` receives the status. */
int chttp_perform(const chttp_request *request, const chttp_callbacks *callbacks, long *status, char *error,
                  size_t error_size);

/* libcurl's codes the callers name: a timeout, a refused connection, TLS verification, TLS. */
enum {
    CHTTP_TIMEOUT = 28,
    CHTTP_CONNECT_FAILED = 7,
    CHTTP_PEER_VERIFICATION = 60,
    CHTTP_TLS_CONNECT = 35,
    CHTTP_ABORTED_BY_CALLBACK = 42,
    CHTTP_WRITE_ERROR = 23,
};

#endif
