#!/usr/bin/env bash
# Helm, built from the Go module proxy (helm.sh/helm/v3/cmd/helm) the first time
# and cached per version, as the control plane's binaries are:
#
#   ${METAREACTOR_CACHE:-$HOME/.cache/metareactor}/helm/<version>/helm
#
# Usage: hack/helm.sh [helm arguments...]   e.g. hack/helm.sh template manifests/helm/metareactor
#        hack/helm.sh --path                prints the binary's path (building it if needed)
#
# Environment:
#   METAREACTOR_CACHE   cache root (default $HOME/.cache/metareactor)
#   GO                  go command (default: go on PATH)
set -euo pipefail

HELM_VERSION=v3.22.0
GO=${GO:-go}
if [[ $GO == go ]] && ! command -v go >/dev/null 2>&1 && [[ -x /usr/local/go/bin/go ]]; then
  GO=/usr/local/go/bin/go
fi
CACHE_ROOT=${METAREACTOR_CACHE:-${HOME:?HOME is not set}/.cache/metareactor}
DIR="$CACHE_ROOT/helm/$HELM_VERSION"
HELM="$DIR/helm"

if [[ ! -x $HELM ]]; then
  mkdir -p "$DIR"
  exec 9>"$DIR/.build.lock"
  flock 9
  if [[ ! -x $HELM ]]; then
    printf 'helm.sh: building helm %s from the Go module proxy (once; a few minutes)\n' "$HELM_VERSION" >&2
    tmp=$(mktemp -d "$DIR/.build.XXXXXX")
    trap 'rm -rf "$tmp"' EXIT
    # A module-less install of exactly this version; the binary is moved into place only when complete.
    GOBIN="$tmp" GOFLAGS=-trimpath CGO_ENABLED=0 "$GO" install "helm.sh/helm/v3/cmd/helm@$HELM_VERSION" >&2
    mv "$tmp/helm" "$HELM"
  fi
fi

if [[ ${1:-} == --path ]]; then
  echo "$HELM"
  exit 0
fi
exec "$HELM" "$@"
