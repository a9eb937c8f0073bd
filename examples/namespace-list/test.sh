#!/usr/bin/env bash
# End-to-end test of the namespace-list example against a running cluster and
# engine: starts the hooks, installs the CRD and the controller, labels
# NAMESPACE and makes two more namespaces (one labelled), creates
# NamespaceList filtered-namespaces, checks its ConfigMap lists the two
# labelled namespaces, labels the third (the list follows), and removes
# everything it created on the way out (also on failure or Ctrl-C).
#
# Usage: examples/namespace-list/test.sh
#
# Environment:
#   KUBECONFIG  the cluster (the engine must be running against it, hosting
#               every CompositeController, i.e. without a target label selector)
#   KUBECTL     kubectl to use (default: hack/kubectl of this repository)
#   NAMESPACE   where the NamespaceList goes; namespaces NAMESPACE-a and
#               NAMESPACE-b are made and deleted here (default: default)
#   HOOK_CMD    the hook command; the port is appended as its last argument
#               (default: python3 <this dir>/hook.py)
#   HOOK_PORT   the hook's port (default: a free one)
#   TIMEOUT     seconds to wait for each step (default 60)
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
CRD=namespacelists.examples.metareactor.dev
CONTROLLER=namespace-list
PARENT=filtered-namespaces      # filtered.yaml
CHILD=filtered-namespaces-list
LABEL=namespace-list

EXAMPLE=namespace-list
# shellcheck source=../lib/test-lib.sh
source "$REPO/examples/lib/test-lib.sh"

A=$NAMESPACE-a B=$NAMESPACE-b
CREATED_CRD=false
CREATED_CONTROLLER=false
LABELLED=false
OK=false

cleanup() {
  local rc=$?
  set +e
  if ! $OK; then
    report_failure "$rc"
    log "---- NamespaceList $NAMESPACE/$PARENT ----"; kn get "$CRD" "$PARENT" -o yaml >&2 2>/dev/null
    log "---- ConfigMap $NAMESPACE/$CHILD ----"; kn get configmap "$CHILD" -o yaml >&2 2>/dev/null
    show_events
  fi
  log "cleaning up"
  kn delete "$CRD" "$PARENT" --ignore-not-found --wait=false >/dev/null 2>&1
  $CREATED_CONTROLLER && k delete compositecontroller "$CONTROLLER" --ignore-not-found >/dev/null
  $CREATED_CRD && k delete crd "$CRD" --ignore-not-found >/dev/null
  $LABELLED && k label namespace "$NAMESPACE" "$LABEL-" >/dev/null 2>&1
  delete_made_namespaces
  stop_hook
  rm -f "$HOOK_LOG"
  exit "$rc"
}

# The ConfigMap lists namespaces $@ (sorted, one a line) and status.count is their number.
listed() {
  local want
  want=$(printf '%s\n' "$@" | sort)
  [[ $(jsonpath configmap "$CHILD" '{.data.namespaces}') == "$want" \
    && $(jsonpath "$CRD" "$PARENT" '{.status.count}') == "$#" ]]
}

{
  trap cleanup EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM

  require_cluster_without compositecontroller "$CONTROLLER"
  start_hook

  log "installing the CRD and the controller"
  k get crd "$CRD" >/dev/null 2>&1 || CREATED_CRD=true
  k apply -f "$HERE/crd.yaml" >/dev/null
  wait_for_crds "$CRD"
  CREATED_CONTROLLER=true
  apply_controller "$HERE/controller.yaml"

  log "labelling $NAMESPACE and $A $LABEL=$NAMESPACE, making $B unlabelled"
  LABELLED=true
  k label namespace "$NAMESPACE" "$LABEL=$NAMESPACE" >/dev/null
  make_namespace "$A" "$LABEL=$NAMESPACE"
  make_namespace "$B"

  log "creating NamespaceList $NAMESPACE/$PARENT"
  sed "s/TEAM/$NAMESPACE/" "$HERE/filtered.yaml" | kn apply -f - >/dev/null
  wait_for "$TIMEOUT" "ConfigMap $CHILD listing $NAMESPACE and $A, count 2 (is the engine running?)" \
    listed "$NAMESPACE" "$A"
  # Converged: a preview of what the engine would write now (its customize hook's related objects read) finds nothing.
  preview 0 "compositecontroller/$CONTROLLER" "$NAMESPACE/$PARENT"

  log "labelling $B: the list follows"
  k label namespace "$B" "$LABEL=$NAMESPACE" >/dev/null
  wait_for "$TIMEOUT" "ConfigMap $CHILD listing $NAMESPACE, $A and $B, count 3" listed "$NAMESPACE" "$A" "$B"

  OK=true
  log "PASSED in ${SECONDS}s"
  exit 0
}
