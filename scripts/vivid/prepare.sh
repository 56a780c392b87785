#!/usr/bin/env bash
# Prepares the vivid integration test: downloads (does not install) Debian's kernel package, extracts
# the kernel image and the modules vivid needs, and builds a busybox initramfs around them.
# Idempotent: a second run with everything in place only prints the cache path.
#
#   scripts/vivid/prepare.sh            # prints the cache directory on its last line
#   IPCEMU_VIVID_CACHE=/some/dir  ...   # where to keep it (default /var/cache/ipcemu-vivid,
#                                       # or ~/.cache/ipcemu-vivid when that is not writable;
#                                       # scripts/lib/machine-cache.sh; set but not writable: an error)
#   IPCEMU_VIVID_KERNEL=linux-image-6.1.0-47-amd64  # a specific kernel package
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
source "$here/../lib/machine-cache.sh"
cache="$(machine_cache ipcemu-vivid IPCEMU_VIVID_CACHE)" || exit 2

# One preparer at a time (two test runs may start together).
exec 9>"$cache/.lock"
command -v flock >/dev/null && flock 9

for tool in apt-get dpkg-deb cpio busybox; do
  command -v "$tool" >/dev/null || { echo "vivid/prepare: '$tool' is missing (run scripts/install-deps.sh)" >&2; exit 2; }
done
busybox_bin="$(command -v busybox)"
if ! file -L "$busybox_bin" 2>/dev/null | grep -q "statically linked"; then
  [ -x /bin/busybox ] && busybox_bin=/bin/busybox
fi

# 1. Which kernel: the one Debian's linux-image-amd64 currently points at, unless told.
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
refreshed=""
refresh_apt_lists() { # once: a fresh machine may have no package lists yet
  [ -n "$refreshed" ] && return 1
  refreshed=1
  echo "vivid/prepare: apt-get update" >&2
  $SUDO apt-get update -qq >&2
}
pkg="${IPCEMU_VIVID_KERNEL:-}"
if [ -z "$pkg" ]; then
  kernel_of_metapackage() {
    apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/{print $2; exit}'
  }
  pkg="$(kernel_of_metapackage)"
  if [ -z "$pkg" ] && refresh_apt_lists; then pkg="$(kernel_of_metapackage)"; fi
fi
[ -n "$pkg" ] || { echo "vivid/prepare: cannot tell which kernel package to use (apt-cache depends linux-image-amd64)" >&2; exit 2; }

# The stamp names the kernel and this recipe, so editing init or this script rebuilds the initramfs.
recipe="$(cat "$here/prepare.sh" "$here/init" | cksum | cut -d' ' -f1)"
stamp="$cache/ready-$pkg-$recipe"
if [ -f "$stamp" ] && [ -f "$cache/vmlinuz" ] && [ -f "$cache/initramfs.cpio.gz" ]; then
  echo "$cache"
  exit 0
fi

# 2. Download (not install) and extract.
work="$cache/work"
rm -rf "$work" && mkdir -p "$work"
if ! ls "$cache/$pkg"_*.deb >/dev/null 2>&1; then
  echo "vivid/prepare: downloading $pkg" >&2
  rm -f "$cache"/linux-image-*.deb
  (cd "$cache" && apt-get download "$pkg" >&2) \
    || { refresh_apt_lists && (cd "$cache" && apt-get download "$pkg" >&2); } \
    || { echo "vivid/prepare: apt-get download $pkg failed" >&2; exit 2; }
fi
deb="$(ls "$cache/$pkg"_*.deb | head -n1)"
echo "vivid/prepare: extracting $(basename "$deb")" >&2
dpkg-deb -x "$deb" "$work/root"
kver="$(ls "$work/root/lib/modules" | head -n1)"
moddir="$work/root/lib/modules/$kver"
cp "$work/root/boot/vmlinuz-$kver" "$cache/vmlinuz"

# 3. The modules: vivid and the 9p host share, each after its dependencies. The .deb has no
#    modules.dep (depmod makes it at install time), so read each module's own "depends=" field.
declare -A path_of=()
while IFS= read -r f; do
  n="$(basename "$f")"; n="${n%%.ko*}"; n="${n//-/_}"
  path_of[$n]="$f"
done < <(cd "$moddir" && find kernel -name '*.ko*')
module_text() { # the module's bytes, decompressed
  case "$1" in
    *.xz) xz -dc "$1" ;; *.zst) zstd -qdc "$1" ;; *.gz) gzip -dc "$1" ;; *) cat "$1" ;;
  esac
}
want=(vivid virtio_pci 9pnet_virtio 9p)
ordered=()
declare -A seen=()
add_with_deps() { # $1 = module name, '-' or '_'
  local n="${1//-/_}"
  [ -n "${seen[$n]:-}" ] && return 0
  seen[$n]=1
  local rel="${path_of[$n]:-}"
  if [ -z "$rel" ]; then
    # Built into this kernel: nothing to load.
    grep -q "/${1}.ko\|/${n}.ko" "$moddir/modules.builtin" 2>/dev/null && return 0
    echo "vivid/prepare: module $1 not found in $pkg" >&2; exit 2
  fi
  local deps d
  deps="$(module_text "$moddir/$rel" | tr '\0' '\n' | grep -a -m1 '^depends=' | cut -d= -f2 | tr ',' ' ' || true)"
  for d in $deps; do add_with_deps "$d"; done
  ordered+=("$rel")
}
for m in "${want[@]}"; do add_with_deps "$m"; done

# 4. The initramfs: busybox, the modules (decompressed: busybox insmod takes plain .ko), and /init.
ird="$work/initramfs"
mkdir -p "$ird"/{bin,dev,proc,sys,host,modules,tmp}
cp "$busybox_bin" "$ird/bin/busybox"
for applet in sh mount umount insmod mkdir chroot poweroff cat echo sleep ls mknod reboot; do
  ln -sf busybox "$ird/bin/$applet"
done
: > "$ird/modules/order"
for rel in "${ordered[@]}"; do
  name="$(basename "$rel")"
  case "$name" in
    *.ko.xz) xz -dc "$moddir/$rel" > "$ird/modules/${name%.xz}"; name="${name%.xz}" ;;
    *.ko.zst) zstd -qdc "$moddir/$rel" > "$ird/modules/${name%.zst}"; name="${name%.zst}" ;;
    *.ko.gz) gzip -dc "$moddir/$rel" > "$ird/modules/${name%.gz}"; name="${name%.gz}" ;;
    *) cp "$moddir/$rel" "$ird/modules/$name" ;;
  esac
  echo "$name" >> "$ird/modules/order"
done
cp "$here/init" "$ird/init"
chmod +x "$ird/init"
(cd "$ird" && find . | cpio -o -H newc --quiet | gzip -1 > "$cache/initramfs.cpio.gz")
echo "$kver" > "$cache/kernel-version"
loaded="$(tr '\n' ' ' < "$ird/modules/order")"
rm -rf "$work"
rm -f "$cache"/ready-*
touch "$stamp"
echo "vivid/prepare: ready ($pkg; modules: $loaded)" >&2
echo "$cache"
