#ifndef IPCEMU_CHTTP_SERVE_H
#define IPCEMU_CHTTP_SERVE_H
/*
 * An HTTP/1.1 server over the system's GNU libmicrohttpd, for the control API (HTTPServe wraps
 * it). One thread per connection: a request's handler runs on its connection's thread and may
 * block it (not one of Swift's cooperative threads). This side listens and accepts itself, so
 * that connections beyond the cap wait in the listen backlog until one closes; it reads each
 * request's body up to a limit, then hands the whole request to `handle`, which answers with
 * chs_respond_bytes or chs_respond_stream before it returns. No libmicrohttpd header here: Swift
 * sees only these declarations.
 */
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct chs_server chs_server;
typedef struct chs_request chs_request;

/* What a streamed body's reader returns besides a count of bytes. */
enum { CHS_STREAM_END = -1, CHS_STREAM_ERROR = -2 };

typedef struct chs_callbacks {
    void *context;
    /* One request, its body read (or found too large). Runs on the connection's thread; must
     * answer through chs_respond_bytes or chs_respond_stream before it returns (else 500). */
    void (*handle)(void *context, chs_request *request);
    /* A streamed body's next bytes (at most `max`): may block until there are some; returns their
     * count (> 0), CHS_STREAM_END or CHS_STREAM_ERROR (the connection is closed). */
    ssize_t (*stream_read)(void *stream, uint8_t *buffer, size_t max);
    /* The streamed response is done with (sent, or the client went away): called once. */
    void (*stream_free)(void *stream);
    /* A message of libmicrohttpd's own (a client that broke the protocol, a resource limit). */
    void (*log)(void *context, const char *message);
} chs_callbacks;

typedef struct chs_config {
    const char *host;
    int port;
    /* Connections served at once; more wait in the listen backlog. */
    unsigned max_connections;
    /* A connection with nothing sent or received for this long is closed; 0: never. */
    unsigned idle_timeout_seconds;
    /* A body longer than this is read and dropped (the request says so: chs_request_body_too_large). */
    size_t body_limit;
    /* A body longer than this is not read at all: a declared one is refused at once with
     * `too_large_status` and `too_large_body` (application/json), and the connection closed; an
     * undeclared (chunked) one closes the connection when it passes the limit. */
    size_t read_limit;
    unsigned too_large_status;
    const uint8_t *too_large_body;
    size_t too_large_body_length;
} chs_config;

/* Binds, listens and starts serving. 0 and the server in `server` and the bound port in `port`,
 * or -1 with why in `error` (NUL-terminated, at most `error_size` bytes). Copies what it keeps. */
int chs_start(const chs_config *config, const chs_callbacks *callbacks, chs_server **server, int *port, char *error,
              size_t error_size);

/* Stops accepting, closes every connection (their sockets shut down: a blocked reader or handler
 * sees its socket hang up), waits for their threads and frees the server. Blocks; never call it
 * from a connection's thread. */
void chs_stop(chs_server *server);

/* The request, valid while `handle` runs. */
const char *chs_request_method(const chs_request *request);
/* The request target as the client sent it (path and query, still percent-encoded). */
const char *chs_request_target(const chs_request *request);
const char *chs_request_version(const chs_request *request);
size_t chs_request_header_count(const chs_request *request);
const char *chs_request_header_name(const chs_request *request, size_t index);
const char *chs_request_header_value(const chs_request *request, size_t index);
const uint8_t *chs_request_body(const chs_request *request);
size_t chs_request_body_length(const chs_request *request);
int chs_request_body_too_large(const chs_request *request);
/* The connection's socket, to wait on (a hang-up means the client is gone); never read or write it. */
int chs_request_socket(const chs_request *request);

/* Answers with a body in memory (copied). 1 if queued, 0 if not (the connection is then closed). */
int chs_respond_bytes(chs_request *request, unsigned status, const char *const *names, const char *const *values,
                      size_t header_count, const uint8_t *body, size_t length);

/* Answers with a body of unknown length (chunked) that `stream_read` produces. Takes `stream`:
 * `stream_free` is called once when it is done with, and at once if this returns 0. */
int chs_respond_stream(chs_request *request, unsigned status, const char *const *names, const char *const *values,
                       size_t header_count, void *stream);

/* A signal one thread raises and a connection's thread waits for (an eventfd): -1 if none could be made. */
int chs_signal_open(void);
void chs_signal_close(int signal);
void chs_signal_raise(int signal);

enum { CHS_WAIT_RAISED = 1, CHS_WAIT_HUNG_UP = 2 };
/* Waits until `signal` is raised (lowering it), `socket` hangs up (shut down, reset; with
 * `peer_close` also when the peer closed its side) or `timeout_ms` passes (-1: no limit). A mask of
 * CHS_WAIT_RAISED and CHS_WAIT_HUNG_UP; 0 on time-out or interruption. */
int chs_signal_wait(int signal, int socket, int peer_close, int timeout_ms);

#endif
