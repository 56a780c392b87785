#!/usr/bin/env bash
# Guest side of the vivid call test (Tests/CameraTests/VividCallTests.swift): runs INSIDE the qemu
# guest of scripts/vivid/run.sh (vivid's /dev/video0, the host root read-only, /mnt writable).
#
#   bash scripts/vivid/unplug-call.sh /path/to/ipcemu /path/to/ipcemu-camera-check [HOLD_SECONDS]
#
# 1. `ipcemu run` with a doorbell profile whose camera is vivid (YUYV 320x180 at 15 fps), on its
#    private mosquitto on loopback, answering calls.
# 2. `ipcemu app call --video` in the background: rings, is answered, opens the WebRTC link and
#    decodes the device's video (one "video: N frames ..." line a second).
# 3. Once the app has decoded frames, `ipcemu-camera-check disconnect /dev/video0 HOLD` presses
#    vivid's Disconnect control (an emulated USB unplug: the kernel gives the device's capture
#    ENODEV) and keeps a handle open for HOLD seconds (default 6), so the camera stays away that
#    long (the device's reopen attempts fail with ENODEV); closing it lets vivid reconnect.
# 4. Waits for the device's `camera lost, the call goes on without video`; samples the app's frame
#    count during the outage (it must stand still); then waits for `camera live` again (the device's
#    capture reopened the camera) and for the app to decode 30 more frames.
# 5. The planned hang-up: SIGTERM to the app (it hangs up, prints its video summary and exits 0
#    when the call was answered), then SIGTERM to the device (exit 0).
#
# Prints "UNPLUG-CALL: ..." progress lines (frames = the app's decoded-frame count at that moment),
# then the device's log (lines "DEVICE| ...") and the app's ("APP| ..."); exits non-zero when a step
# did not happen. The host test asserts on all of it.
set -u
ipcemu="${1:?usage: unplug-call.sh IPCEMU CAMERA_CHECK}"
check="${2:?usage: unplug-call.sh IPCEMU CAMERA_CHECK}"
camera=/dev/video0
devid=ipcemu-vivid-0001
hold="${3:-6}"   # seconds the camera stays unplugged
work=/mnt/unplug-call
mkdir -p "$work"
export TMPDIR=/mnt  # the private broker's folder; the host share is read-only
export PATH="/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"  # the guest's init gives /bin only
say() { echo "UNPLUG-CALL: $*"; }
ip link set lo up || say "fail cannot bring lo up"  # the guest starts with lo down
t0=$(date +%s.%N)
elapsed() { awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }

# Generous timers: under software emulation (TCG) everything is several times slower.
cat >"$work/doorbell.yaml" <<EOF
identity:
  devId: $devid
  localKey: "3f9c2b7a1d4e8f60"
  p2pPassword: "vivid-p2p-secret"
  name: vivid doorbell
  category: sp_dpsxj
capabilities:
  video:
    codecs: [H264]
    main: {width: 320, height: 180, fps: 15}
    sub: {width: 320, height: 180, fps: 15}
behaviour:
  answerPolicy: answer
  answerDelay: 0
timers:
  heartbeatInterval: 3
  heartbeatTimeout: 60
  connectTimeout: 90
camera:
  type: v4l2
  device: $camera
  format: yuyv
  width: 320
  height: 180
  fps: 15
security: plain
EOF

device_log="$work/device.log"
app_log="$work/app.log"
: >"$app_log"
status=0
fail() { say "fail $* (at $(elapsed) s)"; status=1; }

# Polls a condition every 0.2 s for at most $1 seconds.
wait_for() {
  local limit=$1; shift
  local end; end=$(awk -v a="$(date +%s)" -v b="$limit" 'BEGIN { print a + b }')
  until "$@"; do
    [ "$(date +%s)" -ge "$end" ] && return 1
    sleep 0.2
  done
}
frames() { # the app's latest decoded-frame count (0 before the first "video:" line)
  local n; n=$(grep -o 'video: [0-9]* frames' "$app_log" | tail -n1 | awk '{print $2}')
  echo "${n:-0}"
}
frames_at_least() { [ "$(frames)" -ge "$1" ]; }
app_still() { # the app's last two counts are equal
  [ "$(grep -o 'video: [0-9]* frames' "$app_log" | tail -n2 | awk '{print $2}' | uniq | wc -l)" -eq 1 ] \
    && [ "$(grep -c 'video: [0-9]* frames' "$app_log")" -ge 2 ]
}
device_says() { grep -q -- "$1" "$device_log"; }
alive() { kill -0 "$1" 2>/dev/null; }
# `camera live` logged after the `camera lost` line (the first `camera live` is from the call's start).
live_after_loss() { sed -n '/camera lost, the call goes on without video/,$p' "$device_log" | grep -q 'camera live'; }

"$ipcemu" run --profile "$work/doorbell.yaml" --answer answer --log-level info >"$device_log" 2>&1 &
device_pid=$!
app_pid=""

run_flow() {
  wait_for 120 device_says "connected broker=" || { fail "device-not-online"; return; }
  broker=$(grep -o 'private broker started url=mqtt://[0-9.:]*' "$device_log" | head -n1 | sed 's/.*url=//')
  [ -n "$broker" ] || { fail "no-broker-url"; return; }
  say "device-up broker=$broker at $(elapsed) s"

  "$ipcemu" app call "$devid" --broker "$broker" --profile "$work/doorbell.yaml" --video \
    --timeout 60 --heartbeat-interval 3 --heartbeat-timeout 60 >"$app_log" 2>&1 &
  app_pid=$!
  # The app must still be there while its first frames come (a TCG guest can stall for seconds).
  app_has_frames_or_ended() { frames_at_least 15 || ! alive "$app_pid"; }
  wait_for 180 app_has_frames_or_ended
  frames_at_least 15 || { fail "no-video-before-unplug frames=$(frames) app-alive=$(alive "$app_pid" && echo yes || echo no)"; return; }
  say "video frames=$(frames) at $(elapsed) s"
  # The app decodes its first frames in a burst (its pipeline starts late under emulation): let it
  # catch up to real time before the unplug.
  sleep 3

  # The unplug: pressed now, held for $hold s (vivid reconnects when the last handle closes).
  "$check" disconnect "$camera" "$hold" >"$work/disconnect.out" 2>&1 &
  local check_pid=$!
  say "disconnect-pressed hold=${hold}s frames=$(frames) at $(elapsed) s"
  wait_for 60 device_says "camera lost, the call goes on without video" || { fail "no-camera-lost"; return; }
  say "lost frames=$(frames) at $(elapsed) s"
  # Let the frames already on their way drain (the count stands still over two of the app's
  # once-a-second lines); from then on it must not move until the camera returns: the device sends
  # nothing while its camera is away.
  wait_for 10 app_still || say "the app's count did not stand still within 10 s of the loss"
  say "paused frames=$(frames) at $(elapsed) s"
  wait "$check_pid"; local check_status=$?
  cat "$work/disconnect.out"
  [ "$check_status" -eq 0 ] || { fail "disconnect status=$check_status"; return; }
  say "released frames=$(frames) at $(elapsed) s"
  wait_for 120 live_after_loss || { fail "no-camera-live-after-loss"; return; }
  # The app prints its count once a second: let one more line come, so the mark is not stale.
  sleep 1.5
  local mark; mark=$(frames)
  say "live frames=$mark at $(elapsed) s"
  wait_for 120 frames_at_least $((mark + 30)) || { fail "no-video-after-return frames=$(frames) mark=$mark"; return; }
  say "resumed frames=$(frames) at $(elapsed) s"
  alive "$app_pid" || { fail "app-ended-early"; return; }
  alive "$device_pid" || { fail "device-ended-early"; return; }
}
run_flow

# Ends a process with SIGTERM (SIGKILL if it is still there after $2 seconds); says its status,
# which must be 0.
gone() { ! alive "$1"; }
stop_process() {
  local pid=$1 limit=$2 name=$3 code
  if alive "$pid"; then
    kill -TERM "$pid"
    wait_for "$limit" gone "$pid" || { say "$name did not end within ${limit}s of SIGTERM: killed"; kill -KILL "$pid"; }
  fi
  wait "$pid"; code=$?
  say "$name-exit $code"
  [ "$code" -eq 0 ] || status=1
}
# The planned hang-up (SIGTERM: the app hangs up, prints its video summary and exits 0 when the
# call was answered), then the device (it exits 0 after a clean shutdown).
[ -n "$app_pid" ] && stop_process "$app_pid" 30 app
stop_process "$device_pid" 30 device
say "total $(elapsed) s"
sed 's/^/DEVICE| /' "$device_log"
sed 's/^/APP| /' "$app_log"
say "done status=$status"
exit "$status"
