#!/usr/bin/env bash
# End-to-end test of the bluegreen example against a running cluster and
# engine: starts the hook, installs the CRD and the controller, creates
# BlueGreenDeployment nginx (blue serving), changes its image twice and checks
# each switch (the new template on the idle color first, the Service switched
# only once that color is ready, then the old color scaled to zero), deletes
# it, and removes everything it created on the way out (also on failure or
# Ctrl-C).
#
# Nothing runs the ReplicaSets (the local cluster has no ReplicaSet controller
# and no kubelet): the test writes a ReplicaSet's status, as the ReplicaSet
# controller would once its Pods were ready.
#
# Usage: examples/bluegreen/test.sh
#
# Environment:
#   KUBECONFIG  the cluster (the engine must be running against it, hosting
#               every CompositeController, i.e. without a target label selector)
#   KUBECTL     kubectl to use (default: hack/kubectl of this repository)
#   NAMESPACE   where the BlueGreenDeployment goes (default: default)
#   HOOK_CMD    the hook command; the port is appended as its last argument
#               (default: python3 <this dir>/hook.py)
#   HOOK_PORT   the hook's port (default: a free one)
#   TIMEOUT     seconds to wait for each step (default 60); deleting the
#               BlueGreenDeployment may take up to 60 s more
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
CRD=bluegreendeployments.examples.metareactor.dev
CONTROLLER=bluegreen
PARENT=nginx                    # bluegreen.yaml: 2 replicas of nginx:1.25 behind Service nginx

EXAMPLE=bluegreen
# shellcheck source=../lib/test-lib.sh
source "$REPO/examples/lib/test-lib.sh"

CREATED_CRD=false
CREATED_CONTROLLER=false
OK=false

cleanup() {
  local rc=$?
  set +e
  if ! $OK; then
    report_failure "$rc"
    log "---- BlueGreenDeployment $NAMESPACE/$PARENT ----"; kn get "$CRD" "$PARENT" -o yaml >&2 2>/dev/null
    log "---- ReplicaSets and Services ----"; kn get rs,svc -o wide >&2 2>/dev/null
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

# ReplicaSet nginx-$1 runs image $2 with $3 replicas.
replica_set_is() {
  [[ $(jsonpath rs "$PARENT-$1" '{.spec.template.spec.containers[0].image}|{.spec.replicas}') == "$2|$3" ]]
}

serving() { [[ $(jsonpath service "$PARENT" '{.spec.selector.color}') == "$1" ]]; }

active_is() { [[ $(jsonpath "$CRD" "$PARENT" '{.status.activeColor}|{.status.readyReplicas}') == "$1|$2" ]]; }

# Plays the ReplicaSet controller: every replica of nginx-$1 is ready, for its latest generation.
mark_ready() {
  local generation replicas
  IFS='|' read -r generation replicas < <(jsonpath rs "$PARENT-$1" '{.metadata.generation}|{.spec.replicas}') || true
  kn patch rs "$PARENT-$1" --subresource=status --type=merge -p "{\"status\":{\"replicas\":$replicas,\
\"readyReplicas\":$replicas,\"availableReplicas\":$replicas,\"observedGeneration\":$generation}}" >/dev/null
}

set_image() {
  kn patch "$CRD" "$PARENT" --type=json \
    -p "[{\"op\":\"replace\",\"path\":\"/spec/template/spec/containers/0/image\",\"value\":\"$1\"}]" >/dev/null
}

# Changes the image to $1 while color $2 serves, and checks the switch to color $3.
switch() {
  local image=$1 from=$2 to=$3 old_image
  old_image=$(jsonpath rs "$PARENT-$from" '{.spec.template.spec.containers[0].image}')
  log "changing the image to $image: it comes up on $to while $from serves"
  set_image "$image"
  wait_for "$TIMEOUT" "ReplicaSet $PARENT-$to with $image and 2 replicas" replica_set_is "$to" "$image" 2
  sleep 2
  serving "$from" || fail "the Service switched to $to before $to was ready"
  replica_set_is "$from" "$old_image" 2 || fail "ReplicaSet $PARENT-$from changed before the switch"
  log "$to is ready: the Service switches to it and $from scales to zero"
  mark_ready "$to"
  wait_for "$TIMEOUT" "the Service to select color $to" serving "$to"
  wait_for "$TIMEOUT" "ReplicaSet $PARENT-$from scaled to zero" replica_set_is "$from" "$old_image" 0
  wait_for "$TIMEOUT" "status.activeColor $to" active_is "$to" 2
}

{
  trap cleanup EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM

  require_cluster_without compositecontroller "$CONTROLLER"
  ! kn get service "$PARENT" >/dev/null 2>&1 || fail "Service $NAMESPACE/$PARENT already exists; use another NAMESPACE"
  start_hook

  log "installing the CRD and the controller"
  k get crd "$CRD" >/dev/null 2>&1 || CREATED_CRD=true
  k apply -f "$HERE/crd.yaml" >/dev/null
  wait_for_crds "$CRD"
  CREATED_CONTROLLER=true
  apply_controller "$HERE/controller.yaml"

  log "creating BlueGreenDeployment $NAMESPACE/$PARENT: blue serves nginx:1.25"
  kn apply -f "$HERE/bluegreen.yaml" >/dev/null
  wait_for "$TIMEOUT" "ReplicaSet $PARENT-blue (is the engine running?)" replica_set_is blue nginx:1.25 2
  wait_for "$TIMEOUT" "ReplicaSet $PARENT-green with no replicas" replica_set_is green nginx:1.25 0
  wait_for "$TIMEOUT" "Service $PARENT selecting blue" serving blue
  mark_ready blue
  wait_for "$TIMEOUT" "status.activeColor blue with 2 ready" active_is blue 2
  preview 0 "compositecontroller/$CONTROLLER" "$NAMESPACE/$PARENT"

  switch nginx:1.26 blue green
  switch nginx:1.27 green blue

  log "deleting BlueGreenDeployment $NAMESPACE/$PARENT: its ReplicaSets and Service go with it"
  kn delete "$CRD" "$PARENT" >/dev/null
  wait_for "$GC_TIMEOUT" "ReplicaSet $PARENT-blue to be deleted" object_gone rs "$PARENT-blue"
  wait_for "$GC_TIMEOUT" "Service $PARENT to be deleted" object_gone service "$PARENT"

  OK=true
  log "PASSED in ${SECONDS}s"
  exit 0
}
