# Sourced by image/base.sh and hack/image-tools.sh: the pinned Debian packages of image/packages.lock, fetched once
# into ${METAREACTOR_CACHE:-~/.cache/metareactor}/image/debs/ and checked against the lock's SHA-256.
# Needs curl, sha256sum and dpkg-deb.

IMAGE_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
LOCK="$IMAGE_DIR/packages.lock"
CACHE_ROOT=${METAREACTOR_CACHE:-${HOME:?HOME is not set}/.cache/metareactor}
DEB_CACHE="$CACHE_ROOT/image/debs"

debs_die() { printf 'image: ERROR: %s\n' "$*" >&2; exit 1; }

for tool in curl sha256sum dpkg-deb; do
  command -v "$tool" >/dev/null 2>&1 || debs_die "$tool is needed to fetch and unpack the image's Debian packages"
done

# The lock's lines of one set (image, jdk or tools): "package version size sha256 path".
lock_lines() {
  awk -v set="$1" '$1 == set { print $2, $3, $4, $5, $6 }' "$LOCK"
}

# The snapshot.debian.org time the lock was resolved at: where a version the mirror dropped can still be fetched.
lock_snapshot() {
  awk '$1 == "#" && $2 == "snapshot:" { print $3; exit }' "$LOCK"
}

# Prints the cached .deb of one lock line, fetching it first: from deb.debian.org, else from snapshot.debian.org at
# the lock's time (the mirror keeps only a suite's current versions).
fetch_deb() { # PACKAGE VERSION SIZE SHA256 PATH
  local package=$1 sha256=$4 path=$5
  local file="$DEB_CACHE/$sha256.deb"
  if [[ -f $file ]]; then
    echo "$file"
    return
  fi
  mkdir -p "$DEB_CACHE"
  local archive=${path%%/*} rest=${path#*/} tmp
  tmp=$(mktemp "$DEB_CACHE/.fetch.XXXXXX")
  local url
  for url in "http://deb.debian.org/$path" "http://snapshot.debian.org/archive/$archive/$(lock_snapshot)/$rest"; do
    if curl -fsSL --retry 3 -o "$tmp" "$url" 2>/dev/null; then
      if [[ $(sha256sum "$tmp" | cut -d' ' -f1) == "$sha256" ]]; then
        mv "$tmp" "$file"
        echo "$file"
        return
      fi
      printf 'image: %s does not match the SHA-256 of %s in %s\n' "$url" "$package" "$LOCK" >&2
    fi
  done
  rm -f "$tmp"
  debs_die "cannot fetch $package $2 (neither the mirror nor snapshot.debian.org has it): run image/lock.sh to pin \
the current versions and commit image/packages.lock"
}
