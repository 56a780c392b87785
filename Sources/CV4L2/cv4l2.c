#include "cv4l2.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <libv4l2.h>

static int real_open(void *context, const char *path) {
    (void)context;
    int fd = v4l2_open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
    return fd < 0 ? -errno : fd;
}

static int real_close(void *context, int fd) {
    (void)context;
    return v4l2_close(fd) < 0 ? -errno : 0;
}

static int real_ioctl(void *context, int fd, unsigned long request, void *arg) {
    (void)context;
    int r;
    do {
        r = v4l2_ioctl(fd, request, arg);
    } while (r < 0 && errno == EINTR);
    return r < 0 ? -errno : 0;
}

static int real_map(void *context, int fd, size_t length, int64_t offset, void **out) {
    (void)context;
    void *p = v4l2_mmap(NULL, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (int64_t)offset);
    if (p == MAP_FAILED) {
        *out = NULL;
        return -errno;
    }
    *out = p;
    return 0;
}

static int real_unmap(void *context, void *address, size_t length) {
    (void)context;
    return v4l2_munmap(address, length) < 0 ? -errno : 0;
}

static int real_wait(void *context, int fd, int timeout_ms) {
    (void)context;
    struct pollfd p = { .fd = fd, .events = POLLIN, .revents = 0 };
    int r;
    do {
        r = poll(&p, 1, timeout_ms);
    } while (r < 0 && errno == EINTR);
    if (r < 0) return -errno;
    if (r == 0) return 0;
    if (p.revents & POLLNVAL) return -EBADF;
    /* POLLERR without POLLIN: unplugged, or nothing queued; DQBUF tells which. */
    if ((p.revents & (POLLERR | POLLHUP)) && !(p.revents & POLLIN)) return 2;
    return 1;
}

cv4l2_driver cv4l2_libv4l2_driver(void) {
    cv4l2_driver d = {
        .context = NULL,
        .open_device = real_open,
        .close_device = real_close,
        .ioctl = real_ioctl,
        .map_buffer = real_map,
        .unmap_buffer = real_unmap,
        .wait_readable = real_wait,
    };
    return d;
}
