#!/usr/bin/env bash
# End-to-end test of the hello-world example against a running cluster and engine:
# starts the hook, installs the CRD and the controller, creates a Hello, checks
# the greeting ConfigMap and the status, edits the Hello, deletes it, and
# removes everything it created on the way out (also on failure or Ctrl-C).
#
# Usage: examples/hello-world/test.sh
#
# Environment:
#   KUBECONFIG  the cluster (the engine must be running against it, hosting
#               every CompositeController, i.e. without a target label selector)
#   KUBECTL     kubectl to use (default: hack/kubectl of this repository)
#   NAMESPACE   where the Hello goes (default: default)
#   HOOK_CMD    the hook command; the port is appended as its last argument
#               (default: python3 <this dir>/hook.py), e.g.
#               HOOK_CMD="java -jar examples/hello-world-java/target/hello-hook.jar"
#   HOOK_PORT   the hook's port (default: a free one)
#   TIMEOUT     seconds to wait for each step (default 60); deleting the Hello
#               may take up to 30 s more, see "Garbage collection" in this directory's README.md
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
# Fully qualified everywhere: a short name like "hello" can resolve to another group's Hello in a shared cluster.
CRD=hellos.examples.metareactor.dev
CONTROLLER=hello-world
PARENT=hello
CHILD=hello-greeting

EXAMPLE=hello-world
# shellcheck source=../lib/test-lib.sh
source "$REPO/examples/lib/test-lib.sh"

CREATED_CRD=false
CREATED_CONTROLLER=false
OK=false

# On every exit: what the test needs to see when it failed, then remove what
# this run created (and only that: a CRD that was there before stays).
cleanup() {
  local rc=$?
  set +e
  if ! $OK; then
    report_failure "$rc"
    log "---- Hello $NAMESPACE/$PARENT ----"; kn get "$CRD" "$PARENT" -o yaml >&2 2>/dev/null
    show_events
  fi
  log "cleaning up"
  kn delete "$CRD" "$PARENT" --ignore-not-found --wait=false >/dev/null 2>&1
  $CREATED_CONTROLLER && k delete compositecontroller "$CONTROLLER" --ignore-not-found >/dev/null
  $CREATED_CRD && k delete crd "$CRD" --ignore-not-found >/dev/null
  stop_hook
  rm -f "$HOOK_LOG"
  exit "$rc"
}

greeting_is() { [[ $(jsonpath configmap "$CHILD" '{.data.greeting}') == "$1" ]]; }

# status.greeting is the expected one and status.observedGeneration has caught
# up with the Hello's generation, i.e. the engine synced its latest spec.
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
  start_hook

  log "installing the CRD and the controller"
  k get crd "$CRD" >/dev/null 2>&1 || CREATED_CRD=true
  k apply -f "$HERE/crd.yaml" >/dev/null
  wait_for_crds "$CRD"
  CREATED_CONTROLLER=true
  apply_controller "$HERE/controller.yaml"

  log "creating Hello $NAMESPACE/$PARENT"
  kn apply -f "$HERE/hello.yaml" >/dev/null
  wait_for "$TIMEOUT" "ConfigMap $CHILD with greeting 'Hello, World!' (is the engine running?)" \
    greeting_is 'Hello, World!'
  wait_for "$TIMEOUT" "status.greeting 'Hello, World!' and status.observedGeneration of Hello $PARENT" \
    status_is 'Hello, World!'

  log "changing who to Metareactor"
  kn patch "$CRD" "$PARENT" --type=merge -p '{"spec":{"who":"Metareactor"}}' >/dev/null
  wait_for "$TIMEOUT" "ConfigMap $CHILD with greeting 'Hello, Metareactor!'" greeting_is 'Hello, Metareactor!'
  wait_for "$TIMEOUT" "status.greeting 'Hello, Metareactor!' with the new observedGeneration" \
    status_is 'Hello, Metareactor!'
  # The first sync saw no child yet; every later one sees the ConfigMap.
  wait_for "$TIMEOUT" "status.observedChildren 1" observed_children_is 1
  # Converged: a preview of what the engine would write now finds nothing.
  preview 0 "compositecontroller/$CONTROLLER" "$NAMESPACE/$PARENT"

  log "deleting Hello $NAMESPACE/$PARENT"
  kn delete "$CRD" "$PARENT" >/dev/null
  wait_for "$GC_TIMEOUT" "ConfigMap $CHILD to be deleted with its parent" child_gone

  OK=true
  log "PASSED"
  exit 0
}
