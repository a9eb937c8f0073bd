#!/usr/bin/env bash
# End-to-end test of the configmap-propagation-cel example against a running
# cluster and engine: installs the CRD and the controller (its customize and
# sync hooks are CEL: nothing to start),
# creates ConfigMap settings in NAMESPACE and three more namespaces, propagates
# it to two of them (status counts the copies, the third stays without),
# previews the converged parent (nothing to write), edits the source (every
# copy follows), moves a target (a copy made, one deleted), and removes
# everything it created on the way out (also on failure or Ctrl-C).
#
# Usage: examples/configmap-propagation-cel/test.sh
#
# Environment:
#   KUBECONFIG  the cluster (the engine must be running against it, hosting
#               every CompositeController, i.e. without a target label selector)
#   KUBECTL     kubectl to use (default: hack/kubectl of this repository)
#   NAMESPACE   where the source ConfigMap goes; the targets are namespaces
#               NAMESPACE-one, -two and -three, made and deleted here
#               (default: default)
#   TIMEOUT     seconds to wait for each step (default 60)
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
CRD=celconfigmappropagations.examples.metareactor.dev
CONTROLLER=configmap-propagation-cel
PARENT=settings                 # propagation.yaml
SOURCE=settings

EXAMPLE=configmap-propagation-cel
# shellcheck source=../lib/test-lib.sh
source "$REPO/examples/lib/test-lib.sh"

ONE=$NAMESPACE-one TWO=$NAMESPACE-two THREE=$NAMESPACE-three
CREATED_CRD=false
CREATED_CONTROLLER=false
CREATED_SOURCE=false
OK=false

cleanup() {
  local rc=$?
  set +e
  if ! $OK; then
    log "FAILED (exit $rc)"
    log "---- events of the controller ----"
    k get events -A --field-selector "involvedObject.name=$CONTROLLER" 2>/dev/null | tail -n 10 >&2
    log "---- CelConfigMapPropagation $PARENT ----"; k get "$CRD" "$PARENT" -o yaml >&2 2>/dev/null
    log "---- ConfigMaps $SOURCE ----"; k get configmaps -A --field-selector "metadata.name=$SOURCE" >&2 2>/dev/null
    show_events
  fi
  log "cleaning up"
  k delete "$CRD" "$PARENT" --ignore-not-found --wait=false >/dev/null 2>&1
  $CREATED_CONTROLLER && k delete compositecontroller "$CONTROLLER" --ignore-not-found >/dev/null
  $CREATED_CRD && k delete crd "$CRD" --ignore-not-found >/dev/null
  $CREATED_SOURCE && kn delete configmap "$SOURCE" --ignore-not-found >/dev/null
  delete_made_namespaces
  rm -f "$HOOK_LOG"
  exit "$rc"
}

# The copy in namespace $1 holds color $2 and is controlled by the CelConfigMapPropagation.
copy_is() {
  field_in_is configmap "$SOURCE" "$1" \
    '{.data.color}|{.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name}' "$2|CelConfigMapPropagation/$PARENT"
}

copies_are() {
  [[ $(k get "$CRD" "$PARENT" -o 'jsonpath={.status.expectedCopies}/{.status.actualCopies}' 2>/dev/null) == "$1" ]]
}

set_color() { kn create configmap "$SOURCE" --from-literal=color="$1" --dry-run=client -o yaml | kn apply -f - >/dev/null; }

{
  trap cleanup EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM

  require_cluster_without compositecontroller "$CONTROLLER"
  ! k get crd "$CRD" >/dev/null 2>&1 || ! k get "$CRD" "$PARENT" >/dev/null 2>&1 \
    || fail "CelConfigMapPropagation $PARENT already exists"
  ! kn get configmap "$SOURCE" >/dev/null 2>&1 || fail "ConfigMap $NAMESPACE/$SOURCE already exists; use another NAMESPACE"

  log "installing the CRD and the controller"
  k get crd "$CRD" >/dev/null 2>&1 || CREATED_CRD=true
  k apply -f "$HERE/crd.yaml" >/dev/null
  wait_for_crds "$CRD"
  CREATED_CONTROLLER=true
  k apply -f "$HERE/controller.yaml" >/dev/null

  log "creating ConfigMap $NAMESPACE/$SOURCE and namespaces $ONE, $TWO, $THREE"
  CREATED_SOURCE=true
  set_color blue
  for ns in "$ONE" "$TWO" "$THREE"; do make_namespace "$ns"; done

  log "propagating $SOURCE to $ONE and $TWO"
  sed -e "s/SOURCE/$NAMESPACE/" -e "s/ONE/$ONE/" -e "s/TWO/$TWO/" "$HERE/propagation.yaml" | k apply -f - >/dev/null
  wait_for "$TIMEOUT" "a copy in $ONE (is the engine running?)" copy_is "$ONE" blue
  wait_for "$TIMEOUT" "a copy in $TWO" copy_is "$TWO" blue
  wait_for "$TIMEOUT" "status expectedCopies/actualCopies 2/2" copies_are 2/2
  gone_from configmap "$SOURCE" "$THREE" || fail "$THREE got a copy it did not ask for"
  # Converged: a preview of what the engine would write now (its CEL hooks evaluated, the related source read) finds
  # nothing.
  preview 0 "compositecontroller/$CONTROLLER" "$PARENT"

  log "changing the source: every copy follows"
  set_color green
  wait_for "$TIMEOUT" "the copy in $ONE to turn green" copy_is "$ONE" green
  wait_for "$TIMEOUT" "the copy in $TWO to turn green" copy_is "$TWO" green

  log "targeting $TWO and $THREE instead: $THREE gets a copy, $ONE loses its"
  k patch "$CRD" "$PARENT" --type=merge -p "{\"spec\":{\"targetNamespaces\":[\"$TWO\",\"$THREE\"]}}" >/dev/null
  wait_for "$TIMEOUT" "a copy in $THREE" copy_is "$THREE" green
  wait_for "$TIMEOUT" "the copy in $ONE to be deleted" gone_from configmap "$SOURCE" "$ONE"
  wait_for "$TIMEOUT" "status expectedCopies/actualCopies 2/2" copies_are 2/2

  OK=true
  log "PASSED in ${SECONDS}s"
  exit 0
}
