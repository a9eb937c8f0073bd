#!/usr/bin/env bash
# Pins the Debian packages the image is built from (and the tools its test runs it with) in image/packages.lock:
# the newest version of each in Debian 12 (bookworm, bookworm-updates, bookworm-security) for amd64, with its size,
# SHA-256 and path on the mirror. Run it to take security updates, then commit the lock:
#
#   image/lock.sh && git diff image/packages.lock
#
# With --output FILE it writes the lock there instead (image/debs.sh does, when the committed lock names versions
# no archive has any more).
#
# It uses apt with a state of its own (under ${METAREACTOR_CACHE:-~/.cache/metareactor}/image/apt), so it needs
# neither root nor the machine's sources, only apt and Debian's archive keyring.
set -euo pipefail

# The root filesystem: a shell and coreutils for engine/bin/metareactor (the entry point), the C and C++ runtimes
# and zlib the JVM links to, and base-files (os-release, which scanners read). Resolved with their dependencies.
IMAGE_PACKAGES=(base-files bash coreutils findutils libc6 libstdc++6 zlib1g)
# The Java runtime is jlinked from these two (jmods and the jlink that matches them); their own dependencies are for
# a full install and not needed.
JDK_PACKAGES=(openjdk-17-jre-headless openjdk-17-jdk-headless)
# What ImageIT runs the image with: umoci unpacks the OCI layout, bubblewrap runs it in namespaces of its own.
# Resolved with their dependencies but the C runtime, which the host has.
TOOL_PACKAGES=(bubblewrap umoci)
HOST_PACKAGES=(libc6 libgcc-s1 gcc-12-base)

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
output="$here/packages.lock"
if [[ ${1:-} == --output ]]; then
  output=${2:?--output needs a file}
elif [[ $# -gt 0 ]]; then
  echo "usage: image/lock.sh [--output FILE]" >&2
  exit 2
fi
state=${METAREACTOR_CACHE:-$HOME/.cache/metareactor}/image/apt
mkdir -p "$state/lists/partial" "$state/cache/archives/partial"
: > "$state/status"
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
[[ -r $keyring ]] || { echo "lock.sh: $keyring is missing (apt-get install debian-archive-keyring)" >&2; exit 1; }
cat > "$state/sources.list" <<EOF
deb [signed-by=$keyring] http://deb.debian.org/debian bookworm main
deb [signed-by=$keyring] http://deb.debian.org/debian bookworm-updates main
deb [signed-by=$keyring] http://deb.debian.org/debian-security bookworm-security main
EOF
apt_options=(-o "Dir::Etc::SourceList=$state/sources.list" -o Dir::Etc::SourceParts=/dev/null
  -o "Dir::State::Lists=$state/lists" -o "Dir::State::Status=$state/status" -o "Dir::Cache=$state/cache"
  -o Dir::Etc::Preferences=/dev/null -o Dir::Etc::PreferencesParts=/dev/null
  -o APT::Architecture=amd64 -o APT::Architectures::=amd64 -o Debug::NoLocking=1 -o "APT::Sandbox::User=$(id -un)")
apt-get "${apt_options[@]}" -qq update
snapshot=$(date -u +%Y%m%dT%H%M%SZ)

# "name version" of what installing the packages on an empty system takes (Recommends left out).
closure() {
  apt-get "${apt_options[@]}" install --simulate --no-install-recommends "$@" |
    awk '$1 == "Inst" { sub(/^\(/, "", $3); print $2, $3 }' | sort
}

# "set name version size sha256 path" of each "name version" on stdin.
pin() { # SET
  local name version uri file size sum
  while read -r name version; do
    read -r uri file size sum < <(apt-get "${apt_options[@]}" download --print-uris "$name=$version")
    uri=${uri//\'/}
    printf '%s %s %s %s %s %s\n' "$1" "$name" "$version" "$size" "${sum#SHA256:}" "${uri#http://deb.debian.org/}"
  done
}

host_pattern="^($(IFS='|'; echo "${HOST_PACKAGES[*]}")) "
{
  echo "# The Debian packages the image is built from (image/base.sh) and run with (hack/image-tools.sh), pinned."
  echo "# Written by image/lock.sh from Debian 12 (bookworm, bookworm-updates, bookworm-security, amd64); do not edit."
  echo "# A version the mirror no longer has is fetched from snapshot.debian.org at the time below."
  echo "# snapshot: $snapshot"
  echo "# set package version size sha256 path-on-deb.debian.org"
  closure "${IMAGE_PACKAGES[@]}" | pin image
  for package in "${JDK_PACKAGES[@]}"; do
    apt-cache "${apt_options[@]}" policy "$package" | awk -v p="$package" '$1 == "Candidate:" { print p, $2 }'
  done | pin jdk
  closure "${TOOL_PACKAGES[@]}" | grep -Ev "$host_pattern" | pin tools
} > "$output.new"
mv "$output.new" "$output"
echo "lock.sh: $(grep -vc '^#' "$output") packages pinned in $output" >&2
