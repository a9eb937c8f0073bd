#!/usr/bin/env bash
# Builds kube-apiserver, kube-controller-manager, kubectl and etcd from the Go
# module proxy (wrapper module hack/k8s) and caches them per Kubernetes version:
#
#   ${METAREACTOR_CACHE:-$HOME/.cache/metareactor}/k8s/<version>/bin/{kube-apiserver,kube-controller-manager,kubectl,etcd}
#
# Usage: hack/build-k8s.sh [--force]
#   Prints the bin directory as the last line on stdout; progress goes to stderr.
#   Does nothing when all four binaries are already cached (unless --force).
#   Concurrent invocations serialize on a flock; the build happens in a
#   temporary directory that is renamed into place only when complete.
#
# Environment:
#   METAREACTOR_CACHE   cache root (default $HOME/.cache/metareactor)
#   GO                  go command (default: go on PATH)
set -euo pipefail

# The whole script is one compound command, parsed before it runs, so that
# editing or replacing this file during a long build cannot derail it.
{
HACK_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
MOD_DIR="$HACK_DIR/k8s"
BINARIES=(kube-apiserver kube-controller-manager kubectl etcd)
GO=${GO:-go}
# The usual place of an official Go install, for environments whose PATH lacks it.
if [[ $GO == go ]] && ! command -v go >/dev/null 2>&1 && [[ -x /usr/local/go/bin/go ]]; then
  GO=/usr/local/go/bin/go
fi

log() { printf 'build-k8s: %s\n' "$*" >&2; }
die() { printf 'build-k8s: ERROR: %s\n' "$*" >&2; exit 1; }

force=false
case "${1:-}" in
  --force) force=true ;;
  "") ;;
  *) die "unknown argument: $1 (usage: $0 [--force])" ;;
esac

# The versions come from the committed go.mod, the single source of truth.
K8S_VERSION=$(awk '$1 == "k8s.io/kubernetes" && $2 ~ /^v1\./ { print $2; exit }' "$MOD_DIR/go.mod")
[[ $K8S_VERSION =~ ^v1\.([0-9]+)\.([0-9]+)$ ]] || die "cannot read the k8s.io/kubernetes version from $MOD_DIR/go.mod"
K8S_MINOR=${BASH_REMATCH[1]}

CACHE_ROOT=${METAREACTOR_CACHE:-${HOME:?HOME is not set}/.cache/metareactor}
VERSION_DIR="$CACHE_ROOT/k8s/$K8S_VERSION"
BIN_DIR="$VERSION_DIR/bin"

all_present() {
  local b
  for b in "${BINARIES[@]}"; do [[ -x "$BIN_DIR/$b" ]] || return 1; done
}

if ! $force && all_present; then
  echo "$BIN_DIR"
  exit 0
fi

mkdir -p "$VERSION_DIR"
exec 9>"$VERSION_DIR/.build.lock"
if ! flock -n 9; then
  log "another build of $K8S_VERSION is running; waiting for its lock ($VERSION_DIR/.build.lock)"
  flock 9
fi

# Whoever held the lock before us may have finished the job.
if ! $force && all_present; then
  log "binaries appeared while waiting for the lock"
  echo "$BIN_DIR"
  exit 0
fi

command -v "$GO" >/dev/null 2>&1 || die "'$GO' not found: Go (>= the 'go' line of $MOD_DIR/go.mod) is needed to build the Kubernetes binaries"
need_go=$(awk '$1 == "go" { print $2; exit }' "$MOD_DIR/go.mod")
have_go=$("$GO" env GOVERSION)
log "building Kubernetes $K8S_VERSION + etcd with $have_go (module needs go $need_go) into $BIN_DIR"

TMP_DIR=$(mktemp -d "$VERSION_DIR/.tmp.XXXXXX")
trap 'rm -rf "$TMP_DIR"' EXIT

build_date=$(date -u +%Y-%m-%dT%H:%M:%SZ)
ldflags="-s -w"
for kv in "gitVersion=$K8S_VERSION" "gitMajor=1" "gitMinor=$K8S_MINOR" "gitTreeState=clean" "buildDate=$build_date"; do
  ldflags+=" -X k8s.io/component-base/version.$kv -X k8s.io/client-go/pkg/version.$kv"
done

start=$(date +%s)
(
  cd "$MOD_DIR"
  # One `go build` for all four commands so they share one action graph and
  # the compile of common packages. -mod=readonly: go.sum is committed.
  # Missing modules are fetched from the module proxy on the way.
  GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS="-mod=readonly -buildvcs=false" \
    "$GO" build -trimpath -ldflags "$ldflags" -o "$TMP_DIR/" \
      k8s.io/kubernetes/cmd/kube-apiserver \
      k8s.io/kubernetes/cmd/kube-controller-manager \
      k8s.io/kubernetes/cmd/kubectl \
      go.etcd.io/etcd/server/v3
)
# The etcd main package is the module root go.etcd.io/etcd/server/v3; go build
# names it after the last path element before the /vN suffix ("server").
mv "$TMP_DIR/server" "$TMP_DIR/etcd"
for b in "${BINARIES[@]}"; do [[ -x "$TMP_DIR/$b" ]] || die "go build did not produce $b"; done
"$TMP_DIR/kube-apiserver" --version >&2
"$TMP_DIR/etcd" --version >&2
elapsed=$(( $(date +%s) - start ))
printf 'k8s %s built %s in %ss with %s\n' "$K8S_VERSION" "$build_date" "$elapsed" "$have_go" > "$TMP_DIR/BUILD-INFO"

# Swap the finished directory in. rename(2) of a directory is atomic; an old
# (incomplete or forced) bin dir is moved aside first and removed afterwards.
mkdir "$TMP_DIR/bin"
for b in "${BINARIES[@]}" BUILD-INFO; do mv "$TMP_DIR/$b" "$TMP_DIR/bin/"; done
if [[ -e $BIN_DIR ]]; then mv "$BIN_DIR" "$TMP_DIR/old-bin"; fi
mv -T "$TMP_DIR/bin" "$BIN_DIR"
log "done in ${elapsed}s: $BIN_DIR"
echo "$BIN_DIR"
exit 0
}
