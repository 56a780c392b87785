#define _GNU_SOURCE
#include "chttp_serve.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <microhttpd.h>

struct chs_server {
    struct MHD_Daemon *daemon;
    chs_callbacks callbacks;
    size_t body_limit;
    size_t read_limit;
    unsigned too_large_status;
    uint8_t *too_large_body;
    size_t too_large_body_length;
    int listen_fd;
    int wake[2];
    pthread_t acceptor;
    int acceptor_started;
    /* The connection cap: `active` counts from accept to libmicrohttpd's NOTIFY_CONNECTION CLOSED
     * (it takes a connection on its own thread later, so STARTED may come after MHD_add_connection
     * returns). A connection it drops before STARTED (no memory for its pool) is never CLOSED and
     * keeps its slot: only under memory exhaustion. */
    pthread_mutex_t lock;
    pthread_cond_t changed;
    unsigned max_connections;
    unsigned active;
    int stopping;
};

struct chs_request {
    chs_server *server;
    struct MHD_Connection *connection;
    char *target;
    const char *method;
    const char *version;
    int headers_seen;
    uint8_t *body;
    size_t length;
    size_t capacity;
    size_t received;
    int too_large;
    const char **names;
    const char **values;
    size_t header_count;
    size_t header_capacity;
    int responded;
    enum MHD_Result result;
};

/* MARK: requests */

static void request_free(struct chs_request *r) {
    if (r == NULL) return;
    free(r->target);
    free(r->body);
    free(r->names);
    free(r->values);
    free(r);
}

static struct chs_request *request_new(chs_server *server, const char *target) {
    struct chs_request *r = calloc(1, sizeof *r);
    if (r == NULL) return NULL;
    r->server = server;
    r->target = strdup(target != NULL ? target : "");
    if (r->target == NULL) {
        free(r);
        return NULL;
    }
    return r;
}

/* The raw request target (path and query as sent), before libmicrohttpd splits and decodes it. */
static void *on_uri(void *cls, const char *uri, struct MHD_Connection *connection) {
    (void)connection;
    return request_new(cls, uri);
}

static void on_completed(void *cls, struct MHD_Connection *connection, void **req_cls,
                         enum MHD_RequestTerminationCode toe) {
    (void)cls; (void)connection; (void)toe;
    if (req_cls == NULL) return;
    request_free(*req_cls);
    *req_cls = NULL;
}

static enum MHD_Result collect_header(void *cls, enum MHD_ValueKind kind, const char *key, const char *value) {
    (void)kind;
    struct chs_request *r = cls;
    if (key == NULL) return MHD_YES;
    if (r->header_count == r->header_capacity) {
        size_t capacity = r->header_capacity == 0 ? 16 : r->header_capacity * 2;
        if (capacity > SIZE_MAX / sizeof(char *)) return MHD_NO;
        const char **names = realloc(r->names, capacity * sizeof(char *));
        if (names == NULL) return MHD_NO;
        r->names = names;
        const char **values = realloc(r->values, capacity * sizeof(char *));
        if (values == NULL) return MHD_NO;
        r->values = values;
        r->header_capacity = capacity;
    }
    r->names[r->header_count] = key;
    r->values[r->header_count] = value != NULL ? value : "";
    r->header_count++;
    return MHD_YES;
}

/* Keeps up to body_limit bytes; counts the rest. 0: past read_limit (close the connection). */
static int take_body(struct chs_request *r, const char *data, size_t size) {
    chs_server *s = r->server;
    if (size > SIZE_MAX - r->received) return 0;
    r->received += size;
    if (r->received > s->read_limit) return 0;
    if (r->too_large) return 1;
    if (r->received > s->body_limit) {
        r->too_large = 1;
        free(r->body);
        r->body = NULL;
        r->length = r->capacity = 0;
        return 1;
    }
    if (r->length + size > r->capacity) {
        size_t capacity = r->capacity == 0 ? 4096 : r->capacity;
        while (capacity < r->length + size) {
            if (capacity > SIZE_MAX / 2) return 0;
            capacity *= 2;
        }
        uint8_t *body = realloc(r->body, capacity);
        if (body == NULL) return 0;
        r->body = body;
        r->capacity = capacity;
    }
    memcpy(r->body + r->length, data, size);
    r->length += size;
    return 1;
}

/* A declared body (Content-Length) longer than read_limit. */
static int declared_too_long(struct MHD_Connection *connection, size_t limit) {
    const char *text = MHD_lookup_connection_value(connection, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    if (text == NULL) return 0;
    unsigned long long value = 0;
    for (const char *p = text; *p != 0; p++) {
        if (*p < '0' || *p > '9') return 0;   /* libmicrohttpd itself refuses a malformed one */
        unsigned digit = (unsigned)(*p - '0');
        if (value > (ULLONG_MAX - digit) / 10) return 1;
        value = value * 10 + digit;
    }
    return value > (unsigned long long)limit;
}

static enum MHD_Result on_access(void *cls, struct MHD_Connection *connection, const char *url, const char *method,
                                 const char *version, const char *upload_data, size_t *upload_data_size, void **req_cls) {
    chs_server *s = cls;
    struct chs_request *r = *req_cls;
    if (r == NULL) {
        r = request_new(s, url);
        if (r == NULL) return MHD_NO;
        *req_cls = r;
    }
    r->connection = connection;
    r->method = method != NULL ? method : "";
    r->version = version != NULL ? version : "";
    if (!r->headers_seen) {
        r->headers_seen = 1;
        if (declared_too_long(connection, s->read_limit)) {
            const char *names[] = {"Content-Type"}, *values[] = {"application/json"};
            chs_respond_bytes(r, s->too_large_status, names, values, 1, s->too_large_body, s->too_large_body_length);
            return r->result;
        }
        return MHD_YES;   /* the body next (libmicrohttpd answers `Expect: 100-continue`) */
    }
    if (upload_data_size != NULL && *upload_data_size > 0) {
        if (!take_body(r, upload_data, *upload_data_size)) return MHD_NO;
        *upload_data_size = 0;
        return MHD_YES;
    }
    if (r->responded) return r->result;
    MHD_get_connection_values(connection, MHD_HEADER_KIND, collect_header, r);
    s->callbacks.handle(s->callbacks.context, r);
    if (!r->responded) {
        static const char body[] = "{\"error\":\"internal error: the request was not answered\"}\n";
        const char *names[] = {"Content-Type"}, *values[] = {"application/json"};
        chs_respond_bytes(r, 500, names, values, 1, (const uint8_t *)body, sizeof body - 1);
    }
    return r->result;
}

const char *chs_request_method(const chs_request *r) { return r->method; }
const char *chs_request_target(const chs_request *r) { return r->target; }
const char *chs_request_version(const chs_request *r) { return r->version; }
size_t chs_request_header_count(const chs_request *r) { return r->header_count; }
const char *chs_request_header_name(const chs_request *r, size_t i) { return i < r->header_count ? r->names[i] : ""; }
const char *chs_request_header_value(const chs_request *r, size_t i) { return i < r->header_count ? r->values[i] : ""; }
const uint8_t *chs_request_body(const chs_request *r) { return r->body; }
size_t chs_request_body_length(const chs_request *r) { return r->length; }
int chs_request_body_too_large(const chs_request *r) { return r->too_large; }

int chs_request_socket(const chs_request *r) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(r->connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    return info != NULL ? info->connect_fd : -1;
}

/* MARK: responses */

static int queue(chs_request *r, unsigned status, struct MHD_Response *response, const char *const *names,
                 const char *const *values, size_t count) {
    if (response == NULL) {
        r->responded = 1;
        r->result = MHD_NO;
        return 0;
    }
    for (size_t i = 0; i < count; i++) {
        if (names[i] != NULL && values[i] != NULL) MHD_add_response_header(response, names[i], values[i]);
    }
    r->result = MHD_queue_response(r->connection, status, response);
    r->responded = 1;
    MHD_destroy_response(response);
    return r->result == MHD_YES;
}

int chs_respond_bytes(chs_request *r, unsigned status, const char *const *names, const char *const *values,
                      size_t count, const uint8_t *body, size_t length) {
    if (r->responded) return 0;
    struct MHD_Response *response =
        MHD_create_response_from_buffer(length, length > 0 ? (void *)body : (void *)"", MHD_RESPMEM_MUST_COPY);
    return queue(r, status, response, names, values, count);
}

struct stream_box {
    chs_server *server;
    void *stream;
};

static ssize_t stream_reader(void *cls, uint64_t pos, char *buffer, size_t max) {
    (void)pos;
    struct stream_box *box = cls;
    ssize_t n = box->server->callbacks.stream_read(box->stream, (uint8_t *)buffer, max);
    if (n == 0 || n < CHS_STREAM_ERROR || (n > 0 && (size_t)n > max)) return MHD_CONTENT_READER_END_WITH_ERROR;
    return n == CHS_STREAM_END ? MHD_CONTENT_READER_END_OF_STREAM
         : n == CHS_STREAM_ERROR ? MHD_CONTENT_READER_END_WITH_ERROR : n;
}

static void stream_freer(void *cls) {
    struct stream_box *box = cls;
    box->server->callbacks.stream_free(box->stream);
    free(box);
}

int chs_respond_stream(chs_request *r, unsigned status, const char *const *names, const char *const *values,
                       size_t count, void *stream) {
    chs_server *s = r->server;
    if (r->responded) {
        s->callbacks.stream_free(stream);
        return 0;
    }
    struct stream_box *box = malloc(sizeof *box);
    if (box == NULL) {
        s->callbacks.stream_free(stream);
        r->responded = 1;
        r->result = MHD_NO;
        return 0;
    }
    box->server = s;
    box->stream = stream;
    struct MHD_Response *response = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16384, stream_reader, box,
                                                                      stream_freer);
    if (response == NULL) stream_freer(box);
    return queue(r, status, response, names, values, count);
}

/* MARK: connections: the cap, and the acceptor */

static void on_connection(void *cls, struct MHD_Connection *connection, void **socket_context,
                          enum MHD_ConnectionNotificationCode toe) {
    (void)connection; (void)socket_context;
    chs_server *s = cls;
    if (toe != MHD_CONNECTION_NOTIFY_CLOSED) return;
    pthread_mutex_lock(&s->lock);
    if (s->active > 0) s->active--;
    pthread_cond_broadcast(&s->changed);
    pthread_mutex_unlock(&s->lock);
}

static void on_log(void *cls, const char *format, va_list arguments) {
    chs_server *s = cls;
    char message[512];
    vsnprintf(message, sizeof message, format, arguments);
    size_t n = strlen(message);
    while (n > 0 && (message[n - 1] == '\n' || message[n - 1] == '\r')) message[--n] = 0;
    if (s->callbacks.log != NULL) s->callbacks.log(s->callbacks.context, message);
}

/* Accepts only while fewer than max_connections are served; the rest wait in the listen backlog. */
static void *acceptor_main(void *arg) {
    chs_server *s = arg;
    for (;;) {
        pthread_mutex_lock(&s->lock);
        while (!s->stopping && s->active >= s->max_connections) pthread_cond_wait(&s->changed, &s->lock);
        int stopping = s->stopping;
        pthread_mutex_unlock(&s->lock);
        if (stopping) break;
        struct pollfd fds[2] = {{.fd = s->listen_fd, .events = POLLIN}, {.fd = s->wake[0], .events = POLLIN}};
        if (poll(fds, 2, -1) < 0) {
            if (errno == EINTR) continue;
            usleep(100000);
            continue;
        }
        if (fds[1].revents != 0) continue;   /* stopping: checked at the top */
        if ((fds[0].revents & POLLIN) == 0) continue;
        struct sockaddr_storage address;
        socklen_t length = sizeof address;
        int fd = accept4(s->listen_fd, (struct sockaddr *)&address, &length, SOCK_CLOEXEC);
        if (fd < 0) {
            /* Out of descriptors or memory: wait a little rather than spin; anything else (the
             * client gave up, a signal): go on. */
            if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) usleep(100000);
            continue;
        }
        pthread_mutex_lock(&s->lock);
        s->active++;
        pthread_mutex_unlock(&s->lock);
        /* It closes fd if it fails; then no notification comes for it. */
        if (MHD_add_connection(s->daemon, fd, (struct sockaddr *)&address, length) != MHD_YES) {
            pthread_mutex_lock(&s->lock);
            if (s->active > 0) s->active--;
            pthread_mutex_unlock(&s->lock);
        }
    }
    return NULL;
}

static int listen_on(const char *host, int port, char *error, size_t error_size) {
    char service[16];
    snprintf(service, sizeof service, "%d", port);
    struct addrinfo hints = {0}, *found = NULL;
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    int rc = getaddrinfo(host, service, &hints, &found);
    if (rc != 0) {
        snprintf(error, error_size, "cannot resolve %s: %s", host, gai_strerror(rc));
        return -1;
    }
    int fd = -1, saved = 0;
    for (struct addrinfo *a = found; a != NULL; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0) {
            saved = errno;
            continue;
        }
        int one = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (bind(fd, a->ai_addr, a->ai_addrlen) == 0 && listen(fd, 256) == 0) break;
        saved = errno;
        close(fd);
        fd = -1;
    }
    freeaddrinfo(found);
    if (fd < 0) snprintf(error, error_size, "%s", strerror(saved != 0 ? saved : EADDRNOTAVAIL));
    return fd;
}

static int bound_port(int fd) {
    struct sockaddr_storage address;
    socklen_t length = sizeof address;
    if (getsockname(fd, (struct sockaddr *)&address, &length) != 0) return -1;
    if (address.ss_family == AF_INET) return ntohs(((struct sockaddr_in *)&address)->sin_port);
    if (address.ss_family == AF_INET6) return ntohs(((struct sockaddr_in6 *)&address)->sin6_port);
    return -1;
}

static void server_free(chs_server *s) {
    if (s->listen_fd >= 0) close(s->listen_fd);
    if (s->wake[0] >= 0) close(s->wake[0]);
    if (s->wake[1] >= 0) close(s->wake[1]);
    pthread_cond_destroy(&s->changed);
    pthread_mutex_destroy(&s->lock);
    free(s->too_large_body);
    free(s);
}

int chs_start(const chs_config *config, const chs_callbacks *callbacks, chs_server **server, int *port, char *error,
              size_t error_size) {
    *server = NULL;
    *port = -1;
    chs_server *s = calloc(1, sizeof *s);
    if (s == NULL) {
        snprintf(error, error_size, "out of memory");
        return -1;
    }
    s->callbacks = *callbacks;
    s->body_limit = config->body_limit;
    s->read_limit = config->read_limit > config->body_limit ? config->read_limit : config->body_limit;
    s->too_large_status = config->too_large_status;
    s->max_connections = config->max_connections > 0 ? config->max_connections : 1;
    s->listen_fd = -1;
    s->wake[0] = s->wake[1] = -1;
    pthread_mutex_init(&s->lock, NULL);
    pthread_cond_init(&s->changed, NULL);
    if (config->too_large_body_length > 0) {
        s->too_large_body = malloc(config->too_large_body_length);
        if (s->too_large_body == NULL) {
            snprintf(error, error_size, "out of memory");
            server_free(s);
            return -1;
        }
        memcpy(s->too_large_body, config->too_large_body, config->too_large_body_length);
        s->too_large_body_length = config->too_large_body_length;
    }
    if (pipe2(s->wake, O_CLOEXEC) != 0) {
        snprintf(error, error_size, "pipe: %s", strerror(errno));
        server_free(s);
        return -1;
    }
    s->listen_fd = listen_on(config->host, config->port, error, error_size);
    if (s->listen_fd < 0) {
        server_free(s);
        return -1;
    }
    *port = bound_port(s->listen_fd);
    /* The cap is this side's (the acceptor); libmicrohttpd's own limit only has to stay above it. */
    unsigned limit = s->max_connections > 1u << 20 ? s->max_connections : s->max_connections + 16;
    struct MHD_OptionItem options[] = {
        {MHD_OPTION_EXTERNAL_LOGGER, (intptr_t)on_log, s},
        {MHD_OPTION_CONNECTION_LIMIT, (intptr_t)limit, NULL},
        {MHD_OPTION_CONNECTION_TIMEOUT, (intptr_t)config->idle_timeout_seconds, NULL},
        {MHD_OPTION_CONNECTION_MEMORY_LIMIT, (intptr_t)(64 * 1024), NULL},
        {MHD_OPTION_URI_LOG_CALLBACK, (intptr_t)on_uri, s},
        {MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)on_completed, s},
        {MHD_OPTION_NOTIFY_CONNECTION, (intptr_t)on_connection, s},
        {MHD_OPTION_END, 0, NULL},
    };
    s->daemon = MHD_start_daemon(MHD_USE_THREAD_PER_CONNECTION | MHD_USE_POLL_INTERNAL_THREAD | MHD_USE_NO_LISTEN_SOCKET
                                     | MHD_USE_ITC | MHD_USE_ERROR_LOG,
                                 0, NULL, NULL, on_access, s, MHD_OPTION_ARRAY, options, MHD_OPTION_END);
    if (s->daemon == NULL) {
        snprintf(error, error_size, "libmicrohttpd did not start");
        server_free(s);
        return -1;
    }
    if (pthread_create(&s->acceptor, NULL, acceptor_main, s) != 0) {
        snprintf(error, error_size, "cannot start the accepting thread");
        MHD_stop_daemon(s->daemon);
        server_free(s);
        return -1;
    }
    s->acceptor_started = 1;
    *server = s;
    return 0;
}

void chs_stop(chs_server *s) {
    if (s == NULL) return;
    pthread_mutex_lock(&s->lock);
    s->stopping = 1;
    pthread_cond_broadcast(&s->changed);
    pthread_mutex_unlock(&s->lock);
    ssize_t ignored = write(s->wake[1], "x", 1);
    (void)ignored;
    if (s->acceptor_started) pthread_join(s->acceptor, NULL);
    close(s->listen_fd);
    s->listen_fd = -1;
    MHD_stop_daemon(s->daemon);
    server_free(s);
}

/* MARK: waiting on a connection's thread */

int chs_signal_open(void) { return eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK); }

void chs_signal_close(int signal) {
    if (signal >= 0) close(signal);
}

void chs_signal_raise(int signal) {
    uint64_t one = 1;
    ssize_t ignored = write(signal, &one, sizeof one);
    (void)ignored;
}

int chs_signal_wait(int signal, int socket, int peer_close, int timeout_ms) {
    struct pollfd fds[2] = {{.fd = signal, .events = POLLIN}, {.fd = socket, .events = peer_close ? POLLRDHUP : 0}};
    int n = poll(fds, socket >= 0 ? 2 : 1, timeout_ms);
    if (n <= 0) return 0;
    int result = 0;
    if (fds[0].revents != 0) {
        uint64_t value;
        ssize_t ignored = read(signal, &value, sizeof value);
        (void)ignored;
        result |= CHS_WAIT_RAISED;
    }
    if (socket >= 0 && (fds[1].revents & (POLLHUP | POLLERR | POLLNVAL | POLLRDHUP)) != 0) result |= CHS_WAIT_HUNG_UP;
    return result;
}
