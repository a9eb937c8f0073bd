#!/usr/bin/env bash
# End-to-end test of the daemonjob example against a running cluster and
# engine: starts the hook, installs the CRD and the controller, creates
# DaemonJob hello, checks its DaemonSet, reports half the nodes done (not
# Completed yet), then all (Completed, and the DaemonSet deleted by the
# engine), and removes everything it created on the way out (also on failure
# or Ctrl-C).
#
# Nothing runs the DaemonSet (the local cluster has no DaemonSet controller, no
# nodes and no kubelet): the test writes the DaemonSet's status, as the
# DaemonSet controller would with two nodes.
#
# Usage: examples/daemonjob/test.sh
#
# Environment:
#   KUBECONFIG  the cluster (the engine must be running against it, hosting
#               every CompositeController, i.e. without a target label selector)
#   KUBECTL     kubectl to use (default: hack/kubectl of this repository)
#   NAMESPACE   where the DaemonJob goes (default: default)
#   HOOK_CMD    the hook command; the port is appended as its last argument
#               (default: python3 <this dir>/hook.py)
#   HOOK_PORT   the hook's port (default: a free one)
#   TIMEOUT     seconds to wait for each step (default 60)
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
CRD=daemonjobs.examples.metareactor.dev
CONTROLLER=daemonjob
PARENT=hello                    # hello.yaml
DS=hello-dj

EXAMPLE=daemonjob
# shellcheck source=../lib/test-lib.sh
source "$REPO/examples/lib/test-lib.sh"

CREATED_CRD=false
CREATED_CONTROLLER=false
CREATED_PARENT=false
OK=false

cleanup() {
  local rc=$?
  set +e
  if ! $OK; then
    report_failure "$rc"
    log "---- DaemonJob $NAMESPACE/$PARENT ----"; kn get "$CRD" "$PARENT" -o yaml >&2 2>/dev/null
    log "---- DaemonSet $NAMESPACE/$DS ----"; kn get daemonset "$DS" -o yaml >&2 2>/dev/null
    show_events
  fi
  log "cleaning up"
  if $CREATED_PARENT; then
    kn delete "$CRD" "$PARENT" --ignore-not-found --wait=false >/dev/null 2>&1
    kn delete daemonset "$DS" --ignore-not-found --wait=false >/dev/null 2>&1
  fi
  $CREATED_CONTROLLER && k delete compositecontroller "$CONTROLLER" --ignore-not-found >/dev/null
  $CREATED_CRD && k delete crd "$CRD" --ignore-not-found >/dev/null
  stop_hook
  rm -f "$HOOK_LOG"
  exit "$rc"
}

ds_exists() { [[ -n $(kn get daemonset "$DS" --ignore-not-found -o name 2>/dev/null) ]]; }

# Plays the DaemonSet controller with two nodes: $1 of the 2 scheduled Pods are ready.
report_ready() {
  local generation
  generation=$(jsonpath daemonset "$DS" '{.metadata.generation}')
  kn patch daemonset "$DS" --subresource=status --type=merge -p "{\"status\":{\"desiredNumberScheduled\":2,\
\"currentNumberScheduled\":2,\"numberMisscheduled\":0,\"numberReady\":$1,\"observedGeneration\":$generation}}" >/dev/null
}

# status is numberDone $1 of desiredNumberScheduled 2, Completed $2.
status_is() {
  [[ $(jsonpath "$CRD" "$PARENT" '{.status.numberDone}/{.status.desiredNumberScheduled}/{.status.conditions[?(@.type=="Completed")].status}') \
    == "$1/2/$2" ]]
}

{
  trap cleanup EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM

  require_cluster_without compositecontroller "$CONTROLLER"
  ! ds_exists || fail "DaemonSet $NAMESPACE/$DS already exists; use another NAMESPACE"
  start_hook

  log "installing the CRD and the controller"
  k get crd "$CRD" >/dev/null 2>&1 || CREATED_CRD=true
  k apply -f "$HERE/crd.yaml" >/dev/null
  wait_for_crds "$CRD"
  CREATED_CONTROLLER=true
  apply_controller "$HERE/controller.yaml"

  log "creating DaemonJob $NAMESPACE/$PARENT"
  CREATED_PARENT=true
  kn apply -f "$HERE/hello.yaml" >/dev/null
  wait_for "$TIMEOUT" "DaemonSet $DS (is the engine running?)" ds_exists
  JOB_UID=$(jsonpath "$CRD" "$PARENT" '{.metadata.uid}')
  [[ $(jsonpath daemonset "$DS" '{.spec.template.spec.initContainers[0].name}|{.spec.template.spec.containers[0].name}|{.metadata.labels.controller-uid}|{.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name}') \
    == "hello|pause|$JOB_UID|DaemonJob/$PARENT" ]] || fail "DaemonSet $DS: unexpected template, label or owner"
  preview 0 "compositecontroller/$CONTROLLER" "$NAMESPACE/$PARENT"

  log "one node of two done: not Completed yet"
  report_ready 1
  wait_for "$TIMEOUT" "status numberDone 1 of 2, not Completed" status_is 1 False
  ds_exists || fail "DaemonSet $DS deleted before every node was done"

  log "both nodes done: Completed, and the DaemonSet goes"
  report_ready 2
  wait_for "$TIMEOUT" "status Completed" status_is 2 True
  wait_for "$TIMEOUT" "DaemonSet $DS to be deleted by the engine" object_gone daemonset "$DS"
  status_is 2 True || fail "the DaemonJob forgot it was Completed once its DaemonSet was gone"

  OK=true
  log "PASSED in ${SECONDS}s"
  exit 0
}
