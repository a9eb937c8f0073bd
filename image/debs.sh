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

# Where a version is fetched from: the mirror, which keeps only a suite's current versions, else snapshot.debian.org
# at the lock's time.
deb_urls() { # PATH
  local archive=${1%%/*} rest=${1#*/}
  echo "http://deb.debian.org/$1"
  echo "http://snapshot.debian.org/archive/$archive/$(lock_snapshot)/$rest"
}

# Makes LOCK a lock whose every package can still be fetched. The committed lock stays the record of what the image
# is built from; but the mirror drops a version once a newer one is published (a security update of the JDK, within
# weeks), and snapshot.debian.org may be out of reach, so a clean machine could no longer build the image at all.
# Then the current versions are pinned afresh, from the same signed indexes, into the cache (never into the
# repository), the build goes on from those, and a warning says the committed lock is stale.
settle_lock() {
  local set package version size sha256 path missing=()
  while read -r set package version size sha256 path; do
    if [[ ! -f $DEB_CACHE/$sha256.deb ]] && ! deb_published "$path"; then
      missing+=("$package=$version")
    fi
  done < <(grep -v '^#' "$LOCK")
  [[ ${#missing[@]} -eq 0 ]] && return 0
  local current="$CACHE_ROOT/image/packages.current.lock"
  printf 'image: WARNING: %s pins %s, which no archive this machine reaches has any more.\n' "$LOCK" \
    "${missing[*]}" >&2
  printf 'image: WARNING: building from the current versions, pinned into %s; run image/lock.sh and commit\n' \
    "$current" >&2
  printf 'image: WARNING: image/packages.lock to make them the record.\n' >&2
  mkdir -p "$CACHE_ROOT/image"
  # One pinning at a time: the base layers and the test's tools may both find the lock stale at once.
  (flock 8 && "$IMAGE_DIR/lock.sh" --output "$current" >&2) 8>"$CACHE_ROOT/image/.pin.lock"
  LOCK=$current
}

# Whether the mirror or snapshot.debian.org still has the file at PATH (a HEAD request each).
deb_published() { # PATH
  local url
  for url in $(deb_urls "$1"); do
    curl -fsSI --connect-timeout 10 --max-time 30 -o /dev/null "$url" 2>/dev/null && return 0
  done
  return 1
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
  local tmp url
  tmp=$(mktemp "$DEB_CACHE/.fetch.XXXXXX")
  for url in $(deb_urls "$path"); do
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
