#!/usr/bin/env bash
# End-to-end test of the hello-world-cel example against a running cluster and engine:
# installs the CRD and the controller (its sync hook is CEL: nothing to start),
# creates a CelHello, checks the greeting ConfigMap and the status, edits the
# CelHello, deletes it, and removes everything it created on the way out (also
# on failure or Ctrl-C).
#
# Usage: examples/hello-world-cel/test.sh
#
# Environment:
#   KUBECONFIG  the cluster (the engine must be running against it, hosting
#               every CompositeController, i.e. without a target label selector)
#   KUBECTL     kubectl to use (default: hack/kubectl of this repository)
#   NAMESPACE   where the CelHello goes (default: default)
#   TIMEOUT     seconds to wait for each step (default 60); deleting the CelHello
#               may take up to 60 s more (the garbage collector learns new CRDs every 30 s)
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
CRD=celhellos.examples.metareactor.dev
CONTROLLER=hello-world-cel
PARENT=hello
CHILD=hello-greeting

EXAMPLE=hello-world-cel
# shellcheck source=../lib/test-lib.sh
source "$REPO/examples/lib/test-lib.sh"

CREATED_CRD=false
CREATED_CONTROLLER=false
OK=false

cleanup() {
  local rc=$?
  set +e
  if ! $OK; then
    log "FAILED (exit $rc)"
    log "---- CelHello $NAMESPACE/$PARENT ----"; kn get "$CRD" "$PARENT" -o yaml >&2 2>/dev/null
    log "---- events of the controller ----"
    k get events -A --field-selector "involvedObject.name=$CONTROLLER" 2>/dev/null | tail -n 10 >&2
    show_events
  fi
  log "cleaning up"
  kn delete "$CRD" "$PARENT" --ignore-not-found --wait=false >/dev/null 2>&1
  $CREATED_CONTROLLER && k delete compositecontroller "$CONTROLLER" --ignore-not-found >/dev/null
  $CREATED_CRD && k delete crd "$CRD" --ignore-not-found >/dev/null
  rm -f "$HOOK_LOG"
  exit "$rc"
}

greeting_is() { [[ $(jsonpath configmap "$CHILD" '{.data.greeting}') == "$1" ]]; }

status_is() {
  local greeting observed generation
  IFS='|' read -r greeting observed generation \
    < <(jsonpath "$CRD" "$PARENT" '{.status.greeting}|{.status.observedGeneration}|{.metadata.generation}') || true
  [[ $greeting == "$1" && -n $observed && $observed == "$generation" ]]
}

observed_children_is() { [[ $(jsonpath "$CRD" "$PARENT" '{.status.observedChildren}') == "$1" ]]; }

child_gone() { ! kn get configmap "$CHILD" >/dev/null 2>&1; }

{
  trap cleanup EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM

  require_cluster_without compositecontroller "$CONTROLLER"

  log "installing the CRD and the controller"
  k get crd "$CRD" >/dev/null 2>&1 || CREATED_CRD=true
  k apply -f "$HERE/crd.yaml" >/dev/null
  wait_for_crds "$CRD"
  CREATED_CONTROLLER=true
  k apply -f "$HERE/controller.yaml" >/dev/null

  log "creating CelHello $NAMESPACE/$PARENT"
  kn apply -f "$HERE/hello.yaml" >/dev/null
  wait_for "$TIMEOUT" "ConfigMap $CHILD with greeting 'Hello, World!' (is the engine running?)" \
    greeting_is 'Hello, World!'
  wait_for "$TIMEOUT" "status.greeting 'Hello, World!' and status.observedGeneration of CelHello $PARENT" \
    status_is 'Hello, World!'

  log "changing who to Metareactor"
  kn patch "$CRD" "$PARENT" --type=merge -p '{"spec":{"who":"Metareactor"}}' >/dev/null
  wait_for "$TIMEOUT" "ConfigMap $CHILD with greeting 'Hello, Metareactor!'" greeting_is 'Hello, Metareactor!'
  wait_for "$TIMEOUT" "status.greeting 'Hello, Metareactor!' with the new observedGeneration" \
    status_is 'Hello, Metareactor!'
  wait_for "$TIMEOUT" "status.observedChildren 1" observed_children_is 1
  # Converged: a preview of what the engine would write now (evaluating the same expression) finds nothing.
  preview 0 "compositecontroller/$CONTROLLER" "$NAMESPACE/$PARENT"

  log "deleting CelHello $NAMESPACE/$PARENT"
  kn delete "$CRD" "$PARENT" >/dev/null
  wait_for "$GC_TIMEOUT" "ConfigMap $CHILD to be deleted with its parent" child_gone

  OK=true
  log "PASSED"
  exit 0
}
