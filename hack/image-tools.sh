#!/usr/bin/env bash
# The tools ImageIT runs the image with, from the Debian packages pinned in image/packages.lock ("tools" set),
# unpacked once per machine (no root, no apt, nothing installed on the system) and cached:
#
#   ${METAREACTOR_CACHE:-$HOME/.cache/metareactor}/image/tools-<key>/bin/{umoci,bwrap}
#
# umoci unpacks the OCI layout image/build.sh makes (checking every digest on the way); bubblewrap runs its entry
# point in namespaces of its own (user, mount, PID, IPC, UTS), as an unprivileged user. The wrappers in bin/ run them
# with the libraries unpacked beside them.
#
# Usage: hack/image-tools.sh   prints the bin directory as its last line
set -euo pipefail

# shellcheck source=image/debs.sh
source "$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/image/debs.sh"

tools_dir() {
  echo "$CACHE_ROOT/image/tools-$( (lock_lines tools; cat "${BASH_SOURCE[0]}") | sha256sum | cut -c1-16)"
}
dir=$(tools_dir)
if [[ ! -x $dir/bin/bwrap ]]; then
  mkdir -p "$CACHE_ROOT/image"
  exec 9>"$CACHE_ROOT/image/.tools.lock"
  flock 9
  settle_lock
  dir=$(tools_dir)
  if [[ ! -x $dir/bin/bwrap ]]; then
    tmp=$(mktemp -d "$CACHE_ROOT/image/.tools.XXXXXX")
    trap 'rm -rf "$tmp"' EXIT
    while read -r package version size sha256 path; do
      dpkg-deb -x "$(fetch_deb "$package" "$version" "$size" "$sha256" "$path")" "$tmp/root"
    done < <(lock_lines tools)
    mkdir "$tmp/bin"
    for tool in umoci bwrap; do
      cat > "$tmp/bin/$tool" <<EOF
#!/bin/sh
LD_LIBRARY_PATH="$dir/root/lib/x86_64-linux-gnu:$dir/root/usr/lib/x86_64-linux-gnu" exec "$dir/root/usr/bin/$tool" "\$@"
EOF
      chmod 0755 "$tmp/bin/$tool"
    done
    rm -rf "$dir"
    mv -T "$tmp" "$dir"
    trap - EXIT
  fi
fi
echo "$dir/bin"
