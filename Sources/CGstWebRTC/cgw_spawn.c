/* A child process fed through a pipe: the desktop window of `display: window` is drawn by a
 * gst-launch-1.0 child, so that Xlib ending a process whose X server went away ends that child,
 * never the device (see docs/robustness.md). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <unistd.h>

#include "cgst_display.h"

extern char **environ;

int cgw_spawn_piped(const char *path, char *const argv[], int *input_out, int *errors_out) {
    int input[2] = {-1, -1}, errors[2] = {-1, -1};
    if (pipe2(input, O_CLOEXEC) != 0) return -errno;
    if (pipe2(errors, O_CLOEXEC) != 0) {
        int why = errno;
        close(input[0]);
        close(input[1]);
        return -why;
    }
    /* Room for a few raw frames, so a slow window never holds the sender for long. */
    (void)fcntl(input[1], F_SETPIPE_SZ, 1 << 20);

    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, input[0], 0);
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, errors[1], 2);
    posix_spawn_file_actions_addclosefrom_np(&actions, 3);

    posix_spawnattr_t attributes;
    posix_spawnattr_init(&attributes);
    sigset_t defaults, mask;
    sigemptyset(&defaults);
    sigaddset(&defaults, SIGPIPE);
    sigaddset(&defaults, SIGTERM);
    sigaddset(&defaults, SIGINT);
    sigemptyset(&mask);
    posix_spawnattr_setsigdefault(&attributes, &defaults);
    posix_spawnattr_setsigmask(&attributes, &mask);
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);

    pid_t pid = 0;
    int rc = posix_spawn(&pid, path, &actions, &attributes, argv, environ);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attributes);
    close(input[0]);
    close(errors[1]);
    if (rc != 0) {
        close(input[1]);
        close(errors[0]);
        return -rc;
    }
    *input_out = input[1];
    *errors_out = errors[0];
    return pid;
}
