#!/usr/bin/env bash
# End-to-end test of the clusteredparent example against a running cluster and
# engine: starts the hook, installs the DecoratorController, creates a
# ClusterRole annotated with NAMESPACE, checks its RoleBinding there (owned by
# the ClusterRole, so the garbage collector deletes it with the role), deletes
# the RoleBinding by hand and checks that it is created again, and removes
# everything it created on the way out (also on failure or Ctrl-C).
#
# Usage: examples/clusteredparent/test.sh
#
# Environment:
#   KUBECONFIG  the cluster (the engine must be running against it, hosting
#               every DecoratorController, i.e. without a target label selector)
#   KUBECTL     kubectl to use (default: hack/kubectl of this repository)
#   NAMESPACE   where the RoleBinding goes (default: default)
#   HOOK_CMD    the hook command; the port is appended as its last argument
#               (default: python3 <this dir>/hook.py)
#   HOOK_PORT   the hook's port (default: a free one)
#   TIMEOUT     seconds to wait for each step (default 60)
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
CONTROLLER=clusteredparent
ROLE=clusteredparent-example-reader

EXAMPLE=clusteredparent
# shellcheck source=../lib/test-lib.sh
source "$REPO/examples/lib/test-lib.sh"

CREATED_CONTROLLER=false
CREATED_ROLE=false
OK=false

cleanup() {
  local rc=$?
  set +e
  if ! $OK; then
    report_failure "$rc"
    log "---- ClusterRole $ROLE ----"; k get clusterrole "$ROLE" -o yaml >&2 2>/dev/null
    log "---- RoleBinding $NAMESPACE/$ROLE ----"; kn get rolebinding "$ROLE" -o yaml >&2 2>/dev/null
    show_events
  fi
  log "cleaning up"
  $CREATED_CONTROLLER && k delete decoratorcontroller "$CONTROLLER" --ignore-not-found >/dev/null
  if $CREATED_ROLE; then
    k delete clusterrole "$ROLE" --ignore-not-found --wait=false >/dev/null 2>&1
    kn delete rolebinding "$ROLE" --ignore-not-found --wait=false >/dev/null 2>&1
  fi
  stop_hook
  rm -f "$HOOK_LOG"
  exit "$rc"
}

# The RoleBinding binds the ClusterRole to ServiceAccount $NAMESPACE/default and has one owner, the ClusterRole with
# UID $1, as its controller (blocking its deletion until the binding is gone, as the garbage collector's foreground
# deletion needs).
binding_is() {
  local want="ClusterRole/$ROLE|ServiceAccount/$NAMESPACE/default"
  want+="|[rbac.authorization.k8s.io/v1/ClusterRole/$ROLE/$1/true/true]"
  [[ $(jsonpath rolebinding "$ROLE" '{.roleRef.kind}/{.roleRef.name}|{.subjects[0].kind}/{.subjects[0].namespace}/{.subjects[0].name}|{range .metadata.ownerReferences[*]}[{.apiVersion}/{.kind}/{.name}/{.uid}/{.controller}/{.blockOwnerDeletion}]{end}') \
    == "$want" ]]
}

# The RoleBinding exists with a UID other than $1: created again.
binding_recreated() {
  local uid
  uid=$(jsonpath rolebinding "$ROLE" '{.metadata.uid}') || return 1
  [[ -n $uid && $uid != "$1" ]]
}

{
  trap cleanup EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM

  require_cluster_without decoratorcontroller "$CONTROLLER"
  ! k get clusterrole "$ROLE" >/dev/null 2>&1 || fail "ClusterRole $ROLE already exists; delete it first"
  start_hook

  log "installing the controller"
  CREATED_CONTROLLER=true
  apply_controller "$HERE/controller.yaml"

  log "creating ClusterRole $ROLE, to be bound in $NAMESPACE"
  CREATED_ROLE=true
  sed "s/namespace-to-bind-in/$NAMESPACE/" "$HERE/clusterrole.yaml" | k apply -f - >/dev/null
  ROLE_UID=$(k get clusterrole "$ROLE" -o 'jsonpath={.metadata.uid}')
  wait_for "$TIMEOUT" "RoleBinding $NAMESPACE/$ROLE owned by the ClusterRole (is the engine running?)" \
    binding_is "$ROLE_UID"
  preview 0 "decoratorcontroller/$CONTROLLER"

  log "deleting RoleBinding $NAMESPACE/$ROLE by hand: it comes back"
  BINDING_UID=$(jsonpath rolebinding "$ROLE" '{.metadata.uid}')
  kn delete rolebinding "$ROLE" >/dev/null
  wait_for "$TIMEOUT" "RoleBinding $NAMESPACE/$ROLE created again" binding_recreated "$BINDING_UID"
  binding_is "$ROLE_UID" || fail "the new RoleBinding differs from the first"

  OK=true
  log "PASSED in ${SECONDS}s"
  exit 0
}
