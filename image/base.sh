#!/usr/bin/env bash
# The image's two base layers, built once per machine from the pinned packages of image/packages.lock and cached:
#
#   ${METAREACTOR_CACHE:-~/.cache/metareactor}/image/base-<key>/{debian,java}.tar.gz and layers
#
# where <key> is a hash of the lock and of the files that make the layers (this script, debs.sh, rootfs/), so a
# changed lock or recipe builds new layers and the same ones always give the same bytes.
#
#   debian: the packages of the lock's "image" set unpacked as dpkg would (without their maintainer scripts, which
#           a root filesystem that is never booted needs none of), documentation but copyrights left out; image/rootfs
#           (users root and nonroot 65532, nsswitch.conf); /home/nonroot; /var/run -> /run; and what was installed,
#           as /var/lib/dpkg/status.d/<package> (for image scanners, as distroless images record it).
#   java:   a Java 17 runtime jlinked from Debian's openjdk-17 packages (the lock's "jdk" set) at /usr/lib/jvm/java-17,
#           with the modules the engine uses and its class-data archive, and its status.d entry.
#
# Prints the cache directory as its last line; progress goes to stderr. Concurrent runs wait for one another.
# Needs curl, sha256sum, dpkg-deb, GNU tar, gzip and flock.
set -euo pipefail

# The modules the engine needs (jdeps --list-deps of engine/target/metareactor.jar, less java.desktop and java.sql,
# which Jackson and Micrometer only use when present), TLS' elliptic curves (jdk.crypto.ec), Netty's extended socket
# options (jdk.net), Flight Recorder for --pprof-address (jdk.jfr), and, for looking into a running pod, jcmd
# (jdk.jcmd) and the debugger agent (jdk.jdwp.agent, manifests/debug).
MODULES=java.base,java.logging,java.management,java.naming,java.xml,jdk.crypto.ec,jdk.jcmd,jdk.jdwp.agent,jdk.jfr,\
jdk.management,jdk.net,jdk.unsupported
JAVA_HOME_IN_IMAGE=usr/lib/jvm/java-17

# shellcheck source=image/debs.sh
source "$(dirname "${BASH_SOURCE[0]}")/debs.sh"
log() { printf 'image: %s\n' "$*" >&2; }

base_key() {
  (cat "$LOCK" "$IMAGE_DIR/base.sh" "$IMAGE_DIR/debs.sh"; cd "$IMAGE_DIR/rootfs" && find . -type f | sort |
    xargs cat; echo "$MODULES") | sha256sum | cut -c1-16
}
out="$CACHE_ROOT/image/base-$(base_key)"
if [[ -f $out/layers ]]; then
  echo "$out"
  exit 0
fi
mkdir -p "$CACHE_ROOT/image"
exec 9>"$CACHE_ROOT/image/.base.lock"
flock 9
settle_lock
out="$CACHE_ROOT/image/base-$(base_key)"
if [[ -f $out/layers ]]; then
  echo "$out"
  exit 0
fi

start=$SECONDS
log "building the base layers (once per machine and lock) into $out"
tmp=$(mktemp -d "$CACHE_ROOT/image/.base.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# Every file of a layer gets the lock's time, so the layers are the same bytes wherever they are built.
snapshot=$(lock_snapshot)
epoch=$(date -u -d "${snapshot:0:4}-${snapshot:4:2}-${snapshot:6:2}T${snapshot:9:2}:${snapshot:11:2}:${snapshot:13:2}Z" +%s)

# Unpacks the packages of one lock set into DIR, each recorded in DIR/var/lib/dpkg/status.d.
unpack() { # SET DIR
  local package version size sha256 path deb
  mkdir -p "$2/var/lib/dpkg/status.d"
  while read -r package version size sha256 path; do
    deb=$(fetch_deb "$package" "$version" "$size" "$sha256" "$path")
    dpkg-deb -x "$deb" "$2"
    dpkg-deb -f "$deb" > "$2/var/lib/dpkg/status.d/$package"
  done < <(lock_lines "$1")
}

# A layer: DIR as a tar (sorted, the lock's time, owned by root; PATH... owned by 65532), gzipped; appends
# "digest size diff_id file description" to the layers list.
layer() { # NAME DIR DESCRIPTION [PATH-OWNED-BY-NONROOT...]
  local name=$1 dir=$2 description=$3
  shift 3
  local tar_options=(--sort=name --mtime="@$epoch" --numeric-owner --format=posix
    --pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime)
  local excludes=() path
  for path in "$@"; do excludes+=(--exclude="./$path"); done
  (cd "$dir" && tar "${tar_options[@]}" --owner=0 --group=0 "${excludes[@]}" -cf "$tmp/$name.tar" ./*)
  for path in "$@"; do
    (cd "$dir" && tar "${tar_options[@]}" --owner=65532 --group=65532 -rf "$tmp/$name.tar" "./$path")
  done
  gzip -n -6 < "$tmp/$name.tar" > "$tmp/out/$name.tar.gz"
  printf 'sha256:%s %s sha256:%s %s %s\n' "$(sha256sum < "$tmp/out/$name.tar.gz" | cut -d' ' -f1)" \
    "$(stat -c %s "$tmp/out/$name.tar.gz")" "$(sha256sum < "$tmp/$name.tar" | cut -d' ' -f1)" "$name.tar.gz" \
    "$description" >> "$tmp/out/layers"
  rm "$tmp/$name.tar"
}
mkdir "$tmp/out"

# The Debian root filesystem.
root="$tmp/debian"
unpack image "$root"
(
  cd "$root"
  # Documentation, manuals, translations and iconv's modules: nothing in the image reads them. Copyrights stay.
  find usr/share/doc -mindepth 1 ! -type d ! -name copyright -delete
  rm -rf usr/share/man usr/share/info usr/share/locale usr/share/lintian usr/share/gdb usr/share/menu \
    usr/share/gcc usr/lib/x86_64-linux-gnu/gconv
  find usr/share/doc -type d -empty -delete
  cp -R "$IMAGE_DIR/rootfs/." .
  chmod 0644 etc/passwd etc/group etc/nsswitch.conf
  mkdir -p -m 0700 home/nonroot
  # What base-files' maintainer script would have made (a package ships /var/run as an empty directory).
  rmdir var/run 2>/dev/null || true
  ln -sfn /run var/run
)
layer debian "$root" "Debian 12 packages of image/packages.lock (image set), users root and nonroot" home/nonroot

# The Java runtime, jlinked by the jlink of the same Debian build as its jmods.
jdk="$tmp/jdk"
unpack jdk "$jdk"
# The packages point their configuration at /etc by absolute links; point them into the unpacked tree instead.
while read -r link; do
  target=$(readlink "$link")
  if [[ -e $jdk$target ]]; then ln -sfn "$(realpath --relative-to="$(dirname "$link")" "$jdk$target")" "$link"; fi
done < <(find "$jdk" -type l -lname '/*')
java="$tmp/java"
mkdir -p "$java/usr/lib/jvm" "$java/usr/bin" "$java/var/lib/dpkg/status.d"
jdk_home="$jdk/usr/lib/jvm/java-17-openjdk-amd64"
"$jdk_home/bin/jlink" --module-path "$jdk_home/jmods" --add-modules "$MODULES" --strip-debug --no-man-pages \
  --no-header-files --dedup-legal-notices=error-if-not-same-content --generate-cds-archive \
  --output "$java/$JAVA_HOME_IN_IMAGE" >&2
# The archive for heaps over 32 GB (no compressed pointers): the engine's heap is a fraction of its pod's memory.
rm -f "$java/$JAVA_HOME_IN_IMAGE/lib/server/classes_nocoops.jsa"
ln -s "/$JAVA_HOME_IN_IMAGE/bin/java" "$java/usr/bin/java"
cp "$jdk/var/lib/dpkg/status.d/openjdk-17-jre-headless" "$java/var/lib/dpkg/status.d/"
java_version=$(sed -n 's/^JAVA_VERSION="\(.*\)"$/\1/p' "$java/$JAVA_HOME_IN_IMAGE/release")
layer java "$java" "Java $java_version runtime jlinked from Debian's openjdk-17 ($MODULES)"
echo "$java_version" > "$tmp/out/java-version"

mv -T "$tmp/out" "$out"
log "base layers built in $(( SECONDS - start ))s: $out"
echo "$out"
