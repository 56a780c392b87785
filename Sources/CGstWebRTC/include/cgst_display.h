#ifndef IPCEMU_CGST_DISPLAY_H
#define IPCEMU_CGST_DISPLAY_H
/*
 * Outputs on the device's receive side (profile `display` and `audio.playback`): the caller's
 * video on a window, a KMS screen or in a file, and the caller's voice on an ALSA device.
 *
 * An output is a branch of a receive bin, split off a tee: `tee ... ! queue name=<entry> ! ... !
 * <sink>`. It must never take the call down with it: a window closed by hand, a full disk or a
 * vanished sound card stops that branch only. `cgw_output_guard` makes it so; at the end of a link
 * `cgw_output_finish` lets a recording write its index before the pipeline stops.
 */
#include <stdbool.h>

#include "cgstwebrtc.h"

/* Builds the description (one sink or a short chain) on its own and brings it to READY, which is
 * where a sink opens its device: an X display, a DRM card, an ALSA PCM, a file. Returns true when
 * it opened (and closes it again); false with a message (free with cgw_free) when it cannot. */
bool cgw_output_opens(const char *description, char **error_out);

/* Guards the branch whose first element is the one named `entry_name` inside `bin`: once that
 * branch fails (its last push returned an error), buffers the tee gives it are dropped and reported
 * as delivered, so the tee and everything upstream go on. Also records what finish needs. False
 * when there is no such element. Call before the bin plays. */
bool cgw_output_guard(CgwElement *bin, const char *entry_name);

/* True once the guarded branch has failed. */
bool cgw_output_failed(CgwElement *bin, const char *entry_name);

/* Ends the guarded branch cleanly while the pipeline still plays: from now on the tee's buffers
 * are dropped, an end-of-stream goes into the branch, and this waits (at most timeout_ms) until it
 * reached the branch's sink (a muxer writes its index and header on the way). Returns true when
 * it arrived in time; false otherwise or when there is no such guarded branch. */
bool cgw_output_finish(CgwElement *bin, const char *entry_name, unsigned timeout_ms);

/* Starts `path` with `argv` (NULL-terminated): its stdin is a pipe whose write end is returned in
 * `input_out`, its stderr a pipe whose read end is returned in `errors_out` (both close-on-exec;
 * stdout is /dev/null; no other descriptor of ours is inherited; SIGPIPE, SIGTERM and SIGINT at
 * their defaults). Returns the child's pid, or a negative errno. */
int cgw_spawn_piped(const char *path, char *const argv[], int *input_out, int *errors_out);

#endif
