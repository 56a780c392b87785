# shellcheck shell=bash
# machine_cache NAME [VAR]: prints the folder of the machine-wide cache NAME, made if missing, for
# what a script keeps between runs outside the clone (a CI run in a fresh clone then does not redo
# it): the vivid kernel, the OpenAPI generator, the consumer package's build, the debootstrap root.
#   - VAR set (the name of an environment variable, e.g. IPCEMU_OPENAPI_CACHE) and not empty: its
#     value, which must be (or become) a writable folder; otherwise an error naming VAR, and no
#     fallback (a cache asked for by name is not silently replaced by another);
#   - else /var/cache/NAME when it can be made and written (root: CI), else
#     ${XDG_CACHE_HOME:-~/.cache}/NAME.
# Returns 1 after a message on stderr when no folder is usable. Sourced by the scripts that keep one:
#   cache="$(machine_cache ipcemu-openapi IPCEMU_OPENAPI_CACHE)" || exit 1
machine_cache() {
  local name=$1 var=${2:-} dir
  if [[ -n "$var" && -n "${!var:-}" ]]; then
    dir=${!var}
    if ! mkdir -p -- "$dir" 2>/dev/null || [[ ! -d "$dir" || ! -w "$dir" ]]; then
      echo "$(basename "$0"): $var=$dir is not a folder this user can write (unset it for the default cache)" >&2
      return 1
    fi
    dir=$(cd -- "$dir" && pwd) # absolute: scripts change folders after asking
  else
    dir=/var/cache/$name
    if ! mkdir -p -- "$dir" 2>/dev/null || [[ ! -w "$dir" ]]; then
      dir=${XDG_CACHE_HOME:-$HOME/.cache}/$name
      if ! mkdir -p -- "$dir" 2>/dev/null || [[ ! -w "$dir" ]]; then
        echo "$(basename "$0"): no writable cache folder for $name (/var/cache/$name or $dir)" >&2
        return 1
      fi
    fi
  fi
  printf '%s\n' "$dir"
}
