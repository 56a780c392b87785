#ifndef IPCEMU_CMOSQUITTO_SHIM_H
#define IPCEMU_CMOSQUITTO_SHIM_H
// libmosquitto, plus the few Linux headers the MQTT event loop and the broker launcher need that
// Swift's Glibc module does not export (epoll, eventfd, posix_spawn's close-from action).
#include <mosquitto.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <spawn.h>
#include <pthread.h>

// glibc declares this only under _GNU_SOURCE, which the Glibc module is built without.
extern int posix_spawn_file_actions_addclosefrom_np(posix_spawn_file_actions_t *actions, int from);

/// Adds a "close every descriptor >= from" action, so a spawned broker inherits none of our sockets
/// (an inherited client socket would keep a "closed" MQTT connection open in the child).
static inline int ipcemu_spawn_close_from(posix_spawn_file_actions_t *actions, int from) {
    return posix_spawn_file_actions_addclosefrom_np(actions, from);
}

// Also _GNU_SOURCE-only. Names the calling thread (15 characters at most) for top, gdb, /proc.
extern int pthread_setname_np(pthread_t thread, const char *name);

static inline int ipcemu_name_current_thread(const char *name) {
    return pthread_setname_np(pthread_self(), name);
}
#endif
