#!/usr/bin/env bash
# End-to-end test of the global-config-map example against a running cluster
# and engine: starts the hooks, installs the CRD and the controller, creates
# ConfigMap global-settings in NAMESPACE and a GlobalConfigMap copying it to
# every namespace, checks the copies in namespace default and in a namespace
# made before, makes a namespace (it gets a copy), edits the source (the
# copies follow), and removes everything it created on the way out (also on
# failure or Ctrl-C), the copies in every namespace included.
#
# Usage: examples/global-config-map/test.sh
#
# Environment:
#   KUBECONFIG  the cluster (the engine must be running against it, hosting
#               every CompositeController, i.e. without a target label selector)
#   KUBECTL     kubectl to use (default: hack/kubectl of this repository)
#   NAMESPACE   where the source ConfigMap goes; namespaces NAMESPACE-before
#               and NAMESPACE-after are made and deleted here (default: default)
#   HOOK_CMD    the hook command; the port is appended as its last argument
#               (default: python3 <this dir>/hook.py)
#   HOOK_PORT   the hook's port (default: a free one)
#   TIMEOUT     seconds to wait for each step (default 60)
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
CRD=globalconfigmaps.examples.metareactor.dev
CONTROLLER=global-config-map
PARENT=global-settings          # global.yaml
SOURCE=global-settings

EXAMPLE=global-config-map
# shellcheck source=../lib/test-lib.sh
source "$REPO/examples/lib/test-lib.sh"

BEFORE=$NAMESPACE-before AFTER=$NAMESPACE-after
CREATED_CRD=false
CREATED_CONTROLLER=false
CREATED_SOURCE=false
PARENT_UID=
OK=false

cleanup() {
  local rc=$?
  set +e
  if ! $OK; then
    report_failure "$rc"
    log "---- GlobalConfigMap $PARENT ----"; k get "$CRD" "$PARENT" -o yaml >&2 2>/dev/null
    log "---- ConfigMaps $SOURCE ----"; k get configmaps -A --field-selector "metadata.name=$SOURCE" >&2 2>/dev/null
    show_events
  fi
  log "cleaning up"
  k delete "$CRD" "$PARENT" --ignore-not-found --wait=false >/dev/null 2>&1
  $CREATED_CONTROLLER && k delete compositecontroller "$CONTROLLER" --ignore-not-found >/dev/null
  # The copies in every namespace, now rather than whenever the garbage collector gets to them: a copy left behind
  # would stand in the way of the next run's (same name, another owner).
  [[ -z $PARENT_UID ]] || k delete configmaps -A -l "controller-uid=$PARENT_UID" --wait=false >/dev/null 2>&1
  $CREATED_CRD && k delete crd "$CRD" --ignore-not-found >/dev/null
  $CREATED_SOURCE && kn delete configmap "$SOURCE" --ignore-not-found >/dev/null
  delete_made_namespaces
  stop_hook
  rm -f "$HOOK_LOG"
  exit "$rc"
}

# The copy in namespace $1 holds level $2 and is controlled by the GlobalConfigMap.
copy_is() {
  field_in_is configmap "$SOURCE" "$1" \
    '{.data.level}|{.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name}' "$2|GlobalConfigMap/$PARENT"
}

# status.copies is at least $1 (other namespaces come and go in a shared cluster).
copies_at_least() {
  local copies
  copies=$(k get "$CRD" "$PARENT" -o 'jsonpath={.status.copies}' 2>/dev/null) || return 1
  [[ -n $copies ]] && (( copies >= $1 ))
}

set_level() { kn create configmap "$SOURCE" --from-literal=level="$1" --dry-run=client -o yaml | kn apply -f - >/dev/null; }

{
  trap cleanup EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM

  require_cluster_without compositecontroller "$CONTROLLER"
  ! k get crd "$CRD" >/dev/null 2>&1 || ! k get "$CRD" "$PARENT" >/dev/null 2>&1 \
    || fail "GlobalConfigMap $PARENT already exists"
  ! kn get configmap "$SOURCE" >/dev/null 2>&1 || fail "ConfigMap $NAMESPACE/$SOURCE already exists; use another NAMESPACE"
  start_hook

  log "installing the CRD and the controller"
  k get crd "$CRD" >/dev/null 2>&1 || CREATED_CRD=true
  k apply -f "$HERE/crd.yaml" >/dev/null
  wait_for_crds "$CRD"
  CREATED_CONTROLLER=true
  apply_controller "$HERE/controller.yaml"

  log "creating ConfigMap $NAMESPACE/$SOURCE, namespace $BEFORE and the GlobalConfigMap"
  CREATED_SOURCE=true
  set_level info
  make_namespace "$BEFORE"
  sed "s/SOURCE/$NAMESPACE/" "$HERE/global.yaml" | k apply -f - >/dev/null
  PARENT_UID=$(k get "$CRD" "$PARENT" -o 'jsonpath={.metadata.uid}')
  wait_for "$TIMEOUT" "a copy in $BEFORE (is the engine running?)" copy_is "$BEFORE" info
  wait_for "$TIMEOUT" "a copy in default" copy_is default info
  wait_for "$TIMEOUT" "status.copies of at least 2" copies_at_least 2
  # Converged, but the other scripts make namespaces meanwhile (ExamplesIT runs them side by side), which a preview
  # would copy into: it may find writes (1), never a failed sync (2).
  preview "0|1" "compositecontroller/$CONTROLLER" "$PARENT"

  log "making namespace $AFTER: it gets a copy"
  make_namespace "$AFTER"
  wait_for "$TIMEOUT" "a copy in $AFTER" copy_is "$AFTER" info

  log "changing the source: the copies follow"
  set_level debug
  wait_for "$TIMEOUT" "the copy in $AFTER to turn debug" copy_is "$AFTER" debug
  wait_for "$TIMEOUT" "the copy in default to turn debug" copy_is default debug

  OK=true
  log "PASSED in ${SECONDS}s"
  exit 0
}
