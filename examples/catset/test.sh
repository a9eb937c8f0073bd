#!/usr/bin/env bash
# End-to-end test of the catset example against a running cluster and engine:
# starts the hook, installs the CRD and the controller, creates CatSet web
# (3 Pods), checks the ordered start (a Pod only after the one below is Ready),
# changes the Pod template and checks the rolling update (one Pod recreated at
# a time, highest ordinal first, each after the one before is Ready), scales
# down (the highest Pod goes, its PVC stays), deletes the CatSet, and removes
# everything it created on the way out (also on failure or Ctrl-C).
#
# Nothing runs the Pods (the local cluster has no kubelet): the test marks a
# Pod Ready by writing its status, as a kubelet would.
#
# Usage: examples/catset/test.sh
#
# Environment:
#   KUBECONFIG  the cluster (the engine must be running against it, hosting
#               every CompositeController, i.e. without a target label selector)
#   KUBECTL     kubectl to use (default: hack/kubectl of this repository)
#   NAMESPACE   where the CatSet goes (default: default)
#   HOOK_CMD    the hook command; the port is appended as its last argument
#               (default: python3 <this dir>/hook.py)
#   HOOK_PORT   the hook's port (default: a free one)
#   TIMEOUT     seconds to wait for each step (default 60); deleting the CatSet
#               may take up to 60 s more (the garbage collector's discovery)
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
CRD=catsets.examples.metareactor.dev
CONTROLLER=catset
PARENT=web                      # catset.yaml: 3 replicas, nginx:1.25, one volume claim template "www"
PODS=(web-0 web-1 web-2)

EXAMPLE=catset
# shellcheck source=../lib/test-lib.sh
source "$REPO/examples/lib/test-lib.sh"

CREATED_CRD=false
CREATED_CONTROLLER=false
CREATED_PARENT=false
OK=false

cleanup() {
  local rc=$? pod
  set +e
  if ! $OK; then
    report_failure "$rc"
    log "---- CatSet $NAMESPACE/$PARENT ----"; kn get "$CRD" "$PARENT" -o yaml >&2 2>/dev/null
    log "---- Pods and PVCs ----"; kn get pods,pvc -l app=web >&2 2>/dev/null
    show_events
  fi
  log "cleaning up"
  if $CREATED_PARENT; then
    kn delete "$CRD" "$PARENT" --ignore-not-found --wait=false >/dev/null 2>&1
    for pod in "${PODS[@]}"; do delete_pvc "www-$pod" 2>/dev/null; done
  fi
  $CREATED_CONTROLLER && k delete compositecontroller "$CONTROLLER" --ignore-not-found >/dev/null
  $CREATED_CRD && k delete crd "$CRD" --ignore-not-found >/dev/null
  stop_hook
  rm -f "$HOOK_LOG"
  exit "$rc"
}

# Plays the kubelet: Pod $1 is running and Ready.
mark_ready() {
  kn patch pod "$1" --subresource=status --type=merge \
    -p '{"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True"}]}}' >/dev/null
}

pod_exists() { [[ -n $(kn get pod "$1" --ignore-not-found -o name 2>/dev/null) ]]; }

pvc_exists() { [[ -n $(kn get pvc "$1" --ignore-not-found -o name 2>/dev/null) ]]; }

# Pod $1 exists with image $2 (and, if given, a UID other than $3: created again).
pod_is() {
  local got
  got=$(jsonpath pod "$1" '{.spec.containers[0].image}|{.metadata.uid}') || return 1
  [[ ${got%|*} == "$2" && ( -z ${3:-} || ${got#*|} != "$3" ) ]]
}

# The CatSet's Updated condition has reason $1.
rollout_is() {
  [[ $(jsonpath "$CRD" "$PARENT" '{.status.conditions[?(@.type=="Updated")].reason}') == "$1" ]]
}

ready_replicas_is() { [[ $(jsonpath "$CRD" "$PARENT" '{.status.readyReplicas}') == "$1" ]]; }

revisions_of_parent() {
  kn get controllerrevisions.metacontroller.k8s.io \
    -o "jsonpath={range .items[?(@.metadata.ownerReferences[0].name==\"$PARENT\")]}{.metadata.name}{\"\\n\"}{end}" \
    2>/dev/null | grep -c .
}

one_revision() { [[ $(revisions_of_parent) == 1 ]]; }

{
  trap cleanup EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM

  require_cluster_without compositecontroller "$CONTROLLER"
  for pod in "${PODS[@]}"; do
    ! pod_exists "$pod" || fail "Pod $NAMESPACE/$pod already exists; use another NAMESPACE"
  done
  start_hook

  log "installing the CRD and the controller"
  k get crd "$CRD" >/dev/null 2>&1 || CREATED_CRD=true
  k apply -f "$HERE/crd.yaml" >/dev/null
  wait_for_crds "$CRD"
  CREATED_CONTROLLER=true
  apply_controller "$HERE/controller.yaml"

  log "creating CatSet $NAMESPACE/$PARENT: Pods start in order, each after the one below is Ready"
  CREATED_PARENT=true
  kn apply -f "$HERE/catset.yaml" >/dev/null
  for (( i = 0; i < ${#PODS[@]}; i++ )); do
    wait_for "$TIMEOUT" "Pod ${PODS[i]} (is the engine running?)" pod_exists "${PODS[i]}"
    wait_for "$TIMEOUT" "PVC www-${PODS[i]}" pvc_exists "www-${PODS[i]}"
    if (( i + 1 < ${#PODS[@]} )); then
      sleep 2
      ! pod_exists "${PODS[i+1]}" || fail "Pod ${PODS[i+1]} was created before ${PODS[i]} was Ready"
    fi
    mark_ready "${PODS[i]}"
  done
  wait_for "$TIMEOUT" "status.readyReplicas 3" ready_replicas_is 3
  wait_for "$TIMEOUT" "the Updated condition OnLatestRevision" rollout_is OnLatestRevision
  preview 0 "compositecontroller/$CONTROLLER" "$NAMESPACE/$PARENT"

  log "changing the image to nginx:1.26: one Pod recreated at a time, web-2 first"
  declare -A OLD_UID
  for pod in "${PODS[@]}"; do OLD_UID[$pod]=$(jsonpath pod "$pod" '{.metadata.uid}'); done
  kn patch "$CRD" "$PARENT" --type=json \
    -p '[{"op":"replace","path":"/spec/template/spec/containers/0/image","value":"nginx:1.26"}]' >/dev/null
  for (( i = ${#PODS[@]} - 1; i >= 0; i-- )); do
    pod=${PODS[i]}
    wait_for "$TIMEOUT" "Pod $pod recreated with nginx:1.26" pod_is "$pod" nginx:1.26 "${OLD_UID[$pod]}"
    # The last Pod to move ends the rollout; until then the rollout waits for the Pod it moved.
    (( i == 0 )) || wait_for "$TIMEOUT" "the rollout to wait for $pod" rollout_is RolloutWaiting
    for (( j = 0; j < i; j++ )); do
      pod_is "${PODS[j]}" nginx:1.25 || fail "Pod ${PODS[j]} changed before $pod was Ready"
    done
    mark_ready "$pod"
  done
  wait_for "$TIMEOUT" "the Updated condition OnLatestRevision" rollout_is OnLatestRevision
  wait_for "$TIMEOUT" "one ControllerRevision left" one_revision

  log "scaling to 2: web-2 goes, its PVC stays; no rollout"
  kn patch "$CRD" "$PARENT" --type=merge -p '{"spec":{"replicas":2}}' >/dev/null
  wait_for "$TIMEOUT" "Pod web-2 to be deleted" object_gone pod web-2
  pod_is web-1 nginx:1.26 && pod_is web-0 nginx:1.26 || fail "scaling changed the remaining Pods"
  pvc_exists www-web-2 || fail "PVC www-web-2 was deleted"
  one_revision || fail "scaling made a ControllerRevision (revisionHistory.fieldPaths is spec.template)"

  log "deleting CatSet $NAMESPACE/$PARENT: its Pods and PVCs go with it"
  kn delete "$CRD" "$PARENT" >/dev/null
  for pod in "${PODS[@]}"; do release_pvc "www-$pod"; done
  wait_for "$GC_TIMEOUT" "Pod web-0 to be deleted with its CatSet" object_gone pod web-0
  wait_for "$GC_TIMEOUT" "PVC www-web-0 to be deleted with its CatSet" object_gone pvc www-web-0

  OK=true
  log "PASSED in ${SECONDS}s"
  exit 0
}
