#!/usr/bin/env bash
# End-to-end test of the indexedjob example against a running cluster and
# engine: starts the hook, installs the CRD and the controller, creates
# IndexedJob print-index (5 Pods, 2 at a time), and plays the kubelet: finishes
# Pods one by one (a finished Pod makes room for the next index), fails one (it
# is deleted and created again), until the job is Complete with 5 succeeded;
# removes everything it created on the way out (also on failure or Ctrl-C).
#
# Nothing runs the Pods (the local cluster has no kubelet): the test writes
# each Pod's phase, as the kubelet would once its container exited.
#
# Usage: examples/indexedjob/test.sh
#
# Environment:
#   KUBECONFIG  the cluster (the engine must be running against it, hosting
#               every CompositeController, i.e. without a target label selector)
#   KUBECTL     kubectl to use (default: hack/kubectl of this repository)
#   NAMESPACE   where the IndexedJob goes (default: default)
#   HOOK_CMD    the hook command; the port is appended as its last argument
#               (default: python3 <this dir>/hook.py)
#   HOOK_PORT   the hook's port (default: a free one)
#   TIMEOUT     seconds to wait for each step (default 60)
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
CRD=indexedjobs.examples.metareactor.dev
CONTROLLER=indexedjob
PARENT=print-index              # print-index.yaml: completions 5, parallelism 2

EXAMPLE=indexedjob
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
    log "---- IndexedJob $NAMESPACE/$PARENT ----"; kn get "$CRD" "$PARENT" -o yaml >&2 2>/dev/null
    log "---- Pods ----"; kn get pods --show-labels >&2 2>/dev/null
    show_events
  fi
  log "cleaning up"
  if $CREATED_PARENT; then
    kn delete "$CRD" "$PARENT" --ignore-not-found --wait=false >/dev/null 2>&1
    kn delete pods -l "job-index" --ignore-not-found --wait=false >/dev/null 2>&1
  fi
  $CREATED_CONTROLLER && k delete compositecontroller "$CONTROLLER" --ignore-not-found >/dev/null
  $CREATED_CRD && k delete crd "$CRD" --ignore-not-found >/dev/null
  stop_hook
  rm -f "$HOOK_LOG"
  exit "$rc"
}

pod_exists() { [[ -n $(kn get pod "$PARENT-$1" --ignore-not-found -o name 2>/dev/null) ]]; }

# Plays the kubelet: Pod $1's container exited, with phase $2 (Succeeded or Failed).
finish() { kn patch pod "$PARENT-$1" --subresource=status --type=merge -p "{\"status\":{\"phase\":\"$2\"}}" >/dev/null; }

# status is active $1, succeeded $2, Complete $3.
status_is() {
  [[ $(jsonpath "$CRD" "$PARENT" '{.status.active}/{.status.succeeded}/{.status.conditions[?(@.type=="Complete")].status}') \
    == "$1/$2/$3" ]]
}

# Pod $1 exists with a UID other than $2.
pod_recreated() {
  local uid
  uid=$(jsonpath pod "$PARENT-$1" '{.metadata.uid}') || return 1
  [[ -n $uid && $uid != "$2" ]]
}

# Only the Pods of indexes $@ exist (of 0-4).
only_pods() {
  local i
  for i in 0 1 2 3 4; do
    if [[ " $* " == *" $i "* ]]; then pod_exists "$i" || return 1; else ! pod_exists "$i" || return 1; fi
  done
}

{
  trap cleanup EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM

  require_cluster_without compositecontroller "$CONTROLLER"
  ! pod_exists 0 || fail "Pod $NAMESPACE/$PARENT-0 already exists; use another NAMESPACE"
  start_hook

  log "installing the CRD and the controller"
  k get crd "$CRD" >/dev/null 2>&1 || CREATED_CRD=true
  k apply -f "$HERE/crd.yaml" >/dev/null
  wait_for_crds "$CRD"
  CREATED_CONTROLLER=true
  apply_controller "$HERE/controller.yaml"

  log "creating IndexedJob $NAMESPACE/$PARENT: 5 Pods, 2 at a time"
  CREATED_PARENT=true
  kn apply -f "$HERE/print-index.yaml" >/dev/null
  wait_for "$TIMEOUT" "Pods 0 and 1 (is the engine running?)" pod_exists 1
  # The sync that counted two active Pods answered without index 2: parallelism holds.
  wait_for "$TIMEOUT" "status active 2, succeeded 0" status_is 2 0 False
  only_pods 0 1 || fail "more than 2 Pods at once: $(kn get pods -l job-index -o name | tr '\n' ' ')"
  JOB_UID=$(jsonpath "$CRD" "$PARENT" '{.metadata.uid}')
  [[ $(jsonpath pod "$PARENT-1" '{.spec.containers[0].env[?(@.name=="JOB_INDEX")].value}|{.metadata.labels.controller-uid}|{.metadata.ownerReferences[0].name}') \
    == "1|$JOB_UID|$PARENT" ]] || fail "Pod $PARENT-1 has not its index, the job's controller-uid label and owner"
  preview 0 "compositecontroller/$CONTROLLER" "$NAMESPACE/$PARENT"

  log "Pod 0 succeeds: index 2 starts"
  finish 0 Succeeded
  wait_for "$TIMEOUT" "Pod 2" pod_exists 2
  wait_for "$TIMEOUT" "status active 2, succeeded 1" status_is 2 1 False

  log "Pod 1 fails: it is deleted and created again"
  OLD_UID=$(jsonpath pod "$PARENT-1" '{.metadata.uid}')
  finish 1 Failed
  wait_for "$TIMEOUT" "Pod 1 created again" pod_recreated 1 "$OLD_UID"

  log "Pods 1 and 2 succeed, then 3 and 4"
  finish 1 Succeeded
  finish 2 Succeeded
  wait_for "$TIMEOUT" "Pods 3 and 4" only_pods 0 1 2 3 4
  finish 3 Succeeded
  finish 4 Succeeded
  wait_for "$TIMEOUT" "status active 0, succeeded 5, Complete" status_is 0 5 True
  only_pods 0 1 2 3 4 || fail "the finished Pods were not kept"

  OK=true
  log "PASSED in ${SECONDS}s"
  exit 0
}
