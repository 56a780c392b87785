#!/usr/bin/env bash
# Boots Debian's kernel under qemu with the vivid initramfs (prepare.sh) and runs one host script
# inside the guest, chrooted into the host's root (shared read-only over virtio-9p). The guest's
# console (lines starting "IPCEMU-VIVID:" and whatever the script prints) goes to stdout.
#
#   scripts/vivid/run.sh /abs/path/to/script.sh [timeout-seconds]
#
# Software emulation (TCG) by default: it works everywhere, including inside VMs whose nested KVM
# cannot run this kernel. IPCEMU_VIVID_ACCEL=kvm opts in to KVM. The guest has as many CPUs as the
# host up to 2 (IPCEMU_VIVID_SMP overrides), emulated by one host thread each (multi-threaded TCG):
# with one, an encoding device and a decoding app in the guest starved each other for seconds.
set -euo pipefail
script="${1:?usage: run.sh /abs/path/script.sh [timeout-seconds]}"
limit="${2:-240}"
here="$(cd "$(dirname "$0")" && pwd)"
case "$script" in /*) ;; *) echo "vivid/run: the script path must be absolute" >&2; exit 2 ;; esac
command -v qemu-system-x86_64 >/dev/null || {
  echo "vivid/run: qemu-system-x86_64 is missing: install qemu-system-x86 (scripts/install-deps.sh)" >&2; exit 3; }
cache="$("$here/prepare.sh" | tail -n1)"

smp="${IPCEMU_VIVID_SMP:-$(( $(nproc) >= 2 ? 2 : 1 ))}"
accel_args=(-accel tcg,thread=multi -cpu max)
if [ "${IPCEMU_VIVID_ACCEL:-tcg}" = "kvm" ]; then
  accel_args=(-accel kvm -cpu host)
fi
exec timeout --kill-after=5 "$limit" qemu-system-x86_64 \
  "${accel_args[@]}" -m 1024 -smp "$smp" \
  -nographic -no-reboot -nodefaults -serial stdio \
  -kernel "$cache/vmlinuz" -initrd "$cache/initramfs.cpio.gz" \
  -append "console=ttyS0 quiet loglevel=3 panic=-1 ipcemu_script=$script" \
  -virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap
