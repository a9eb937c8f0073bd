#!/usr/bin/env bash
# End-to-end test of the crd-roles example against a running cluster and
# engine: starts the hook, installs the DecoratorController, creates CRD
# gadgets.crdroles.examples.metareactor.dev annotated enable-default-roles,
# checks its reader ClusterRole (rules, owner), deletes the role by hand and
# checks that it is created again, and removes everything it created on the
# way out (also on failure or Ctrl-C).
#
# Usage: examples/crd-roles/test.sh
#
# Environment:
#   KUBECONFIG  the cluster (the engine must be running against it, hosting
#               every DecoratorController, i.e. without a target label selector)
#   KUBECTL     kubectl to use (default: hack/kubectl of this repository)
#   HOOK_CMD    the hook command; the port is appended as its last argument
#               (default: python3 <this dir>/hook.py)
#   HOOK_PORT   the hook's port (default: a free one)
#   TIMEOUT     seconds to wait for each step (default 60)
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
CONTROLLER=crd-roles
CRD=gadgets.crdroles.examples.metareactor.dev    # gadgets-crd.yaml
ROLE=$CRD-reader

EXAMPLE=crd-roles
# shellcheck source=../lib/test-lib.sh
source "$REPO/examples/lib/test-lib.sh"

CREATED_CONTROLLER=false
CREATED_CRD=false
OK=false

cleanup() {
  local rc=$?
  set +e
  if ! $OK; then
    report_failure "$rc"
    log "---- ClusterRole $ROLE ----"; k get clusterrole "$ROLE" -o yaml >&2 2>/dev/null
    show_events
  fi
  log "cleaning up"
  $CREATED_CONTROLLER && k delete decoratorcontroller "$CONTROLLER" --ignore-not-found >/dev/null
  if $CREATED_CRD; then
    k delete crd "$CRD" --ignore-not-found --wait=false >/dev/null 2>&1
    k delete clusterrole "$ROLE" --ignore-not-found --wait=false >/dev/null 2>&1
  fi
  stop_hook
  rm -f "$HOOK_LOG"
  exit "$rc"
}

# The ClusterRole reads gadgets and is controlled by the CRD with UID $1.
role_is() {
  [[ $(k get clusterrole "$ROLE" -o 'jsonpath={.rules[0].apiGroups[0]}/{.rules[0].resources[0]}:{.rules[0].verbs[*]}|{.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name}/{.metadata.ownerReferences[0].uid}/{.metadata.ownerReferences[0].controller}' 2>/dev/null) \
    == "crdroles.examples.metareactor.dev/gadgets:get list watch|CustomResourceDefinition/$CRD/$1/true" ]]
}

# The ClusterRole exists with a UID other than $1.
role_recreated() {
  local uid
  uid=$(k get clusterrole "$ROLE" -o 'jsonpath={.metadata.uid}' 2>/dev/null) || return 1
  [[ -n $uid && $uid != "$1" ]]
}

{
  trap cleanup EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM

  require_cluster_without decoratorcontroller "$CONTROLLER"
  ! k get crd "$CRD" >/dev/null 2>&1 || fail "CRD $CRD already exists; delete it first"
  start_hook

  log "installing the controller"
  CREATED_CONTROLLER=true
  apply_controller "$HERE/controller.yaml"

  log "creating CRD $CRD with the annotation enable-default-roles"
  CREATED_CRD=true
  k apply -f "$HERE/gadgets-crd.yaml" >/dev/null
  CRD_UID=$(k get crd "$CRD" -o 'jsonpath={.metadata.uid}')
  wait_for "$TIMEOUT" "ClusterRole $ROLE owned by the CRD (is the engine running?)" role_is "$CRD_UID"
  preview 0 "decoratorcontroller/$CONTROLLER" "$CRD"

  log "deleting ClusterRole $ROLE by hand: it comes back"
  ROLE_UID=$(k get clusterrole "$ROLE" -o 'jsonpath={.metadata.uid}')
  k delete clusterrole "$ROLE" >/dev/null
  wait_for "$TIMEOUT" "ClusterRole $ROLE created again" role_recreated "$ROLE_UID"
  role_is "$CRD_UID" || fail "the new ClusterRole differs from the first"

  OK=true
  log "PASSED in ${SECONDS}s"
  exit 0
}
