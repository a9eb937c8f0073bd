#!/usr/bin/env bash
# End-to-end test of the secret-propagation example against a running cluster
# and engine: starts the hooks, installs the CRD and the controller, creates
# Secret shareable in NAMESPACE and namespaces alpha and beta (labelled) and
# gamma (not), checks the copies in alpha and beta only, labels gamma (a copy
# appears), unlabels alpha (its copy goes), edits the source (the copies
# follow), and removes everything it created on the way out (also on failure
# or Ctrl-C).
#
# Usage: examples/secret-propagation/test.sh
#
# Environment:
#   KUBECONFIG  the cluster (the engine must be running against it, hosting
#               every CompositeController, i.e. without a target label selector)
#   KUBECTL     kubectl to use (default: hack/kubectl of this repository)
#   NAMESPACE   where the source Secret goes; the targets are namespaces
#               NAMESPACE-alpha, -beta and -gamma, made and deleted here
#               (default: default)
#   HOOK_CMD    the hook command; the port is appended as its last argument
#               (default: python3 <this dir>/hook.py)
#   HOOK_PORT   the hook's port (default: a free one)
#   TIMEOUT     seconds to wait for each step (default 60)
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
CRD=secretpropagations.examples.metareactor.dev
CONTROLLER=secret-propagation
PARENT=shareable                # propagation.yaml
SOURCE=shareable

EXAMPLE=secret-propagation
# shellcheck source=../lib/test-lib.sh
source "$REPO/examples/lib/test-lib.sh"

ALPHA=$NAMESPACE-alpha BETA=$NAMESPACE-beta GAMMA=$NAMESPACE-gamma
# Namespaces labelled secret-propagation=$NAMESPACE are this run's targets (NAMESPACE is unique to the run).
LABEL=secret-propagation
CREATED_CRD=false
CREATED_CONTROLLER=false
CREATED_SOURCE=false
OK=false

cleanup() {
  local rc=$?
  set +e
  if ! $OK; then
    report_failure "$rc"
    log "---- SecretPropagation $PARENT ----"; k get "$CRD" "$PARENT" -o yaml >&2 2>/dev/null
    log "---- Secrets $SOURCE ----"; k get secrets -A --field-selector "metadata.name=$SOURCE" >&2 2>/dev/null
    show_events
  fi
  log "cleaning up"
  k delete "$CRD" "$PARENT" --ignore-not-found --wait=false >/dev/null 2>&1
  $CREATED_CONTROLLER && k delete compositecontroller "$CONTROLLER" --ignore-not-found >/dev/null
  $CREATED_CRD && k delete crd "$CRD" --ignore-not-found >/dev/null
  $CREATED_SOURCE && kn delete secret "$SOURCE" --ignore-not-found >/dev/null
  delete_made_namespaces
  stop_hook
  rm -f "$HOOK_LOG"
  exit "$rc"
}

# The copy in namespace $1 holds token $2 (base64 in the Secret) and is controlled by the SecretPropagation.
copy_is() {
  field_in_is secret "$SOURCE" "$1" \
    '{.data.token}|{.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name}' \
    "$(printf %s "$2" | base64)|SecretPropagation/$PARENT"
}

copies_are() { [[ $(k get "$CRD" "$PARENT" -o 'jsonpath={.status.copies}' 2>/dev/null) == "$1" ]]; }

set_token() {
  kn create secret generic "$SOURCE" --from-literal=token="$1" --dry-run=client -o yaml | kn apply -f - >/dev/null
}

{
  trap cleanup EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM

  require_cluster_without compositecontroller "$CONTROLLER"
  ! k get crd "$CRD" >/dev/null 2>&1 || ! k get "$CRD" "$PARENT" >/dev/null 2>&1 \
    || fail "SecretPropagation $PARENT already exists"
  ! kn get secret "$SOURCE" >/dev/null 2>&1 || fail "Secret $NAMESPACE/$SOURCE already exists; use another NAMESPACE"
  start_hook

  log "installing the CRD and the controller"
  k get crd "$CRD" >/dev/null 2>&1 || CREATED_CRD=true
  k apply -f "$HERE/crd.yaml" >/dev/null
  wait_for_crds "$CRD"
  CREATED_CONTROLLER=true
  apply_controller "$HERE/controller.yaml"

  log "creating Secret $NAMESPACE/$SOURCE; namespaces $ALPHA and $BETA labelled $LABEL=$NAMESPACE, $GAMMA not"
  CREATED_SOURCE=true
  set_token one
  make_namespace "$ALPHA" "$LABEL=$NAMESPACE"
  make_namespace "$BETA" "$LABEL=$NAMESPACE"
  make_namespace "$GAMMA"
  sed -e "s/SOURCE/$NAMESPACE/" -e "s/TEAM/$NAMESPACE/" "$HERE/propagation.yaml" | k apply -f - >/dev/null
  wait_for "$TIMEOUT" "a copy in $ALPHA (is the engine running?)" copy_is "$ALPHA" one
  wait_for "$TIMEOUT" "a copy in $BETA" copy_is "$BETA" one
  wait_for "$TIMEOUT" "status.copies 2" copies_are 2
  gone_from secret "$SOURCE" "$GAMMA" || fail "$GAMMA got a copy without the label"
  # Converged: a preview of what the engine would write now (its customize hook's related objects read) finds nothing.
  preview 0 "compositecontroller/$CONTROLLER" "$PARENT"

  log "labelling $GAMMA: it gets a copy"
  k label namespace "$GAMMA" "$LABEL=$NAMESPACE" >/dev/null
  wait_for "$TIMEOUT" "a copy in $GAMMA" copy_is "$GAMMA" one

  log "unlabelling $ALPHA: its copy goes"
  k label namespace "$ALPHA" "$LABEL-" >/dev/null
  wait_for "$TIMEOUT" "the copy in $ALPHA to be deleted" gone_from secret "$SOURCE" "$ALPHA"

  log "changing the source: the copies follow"
  set_token two
  wait_for "$TIMEOUT" "the copy in $BETA to hold the new token" copy_is "$BETA" two
  wait_for "$TIMEOUT" "the copy in $GAMMA to hold the new token" copy_is "$GAMMA" two
  wait_for "$TIMEOUT" "status.copies 2" copies_are 2

  OK=true
  log "PASSED in ${SECONDS}s"
  exit 0
}
