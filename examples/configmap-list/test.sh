#!/usr/bin/env bash
# End-to-end test of the configmap-list example against a running cluster and
# engine: starts the hooks, installs the CRD and the controller, makes
# namespace NAMESPACE-source with ConfigMaps cm-1 and cm-2 (labelled) and
# cm-3 (not), creates ConfigMapList my-config in NAMESPACE, checks its
# ConfigMap lists source/cm-1 and source/cm-2, labels cm-3 (the list follows),
# and removes everything it created on the way out (also on failure or
# Ctrl-C).
#
# Usage: examples/configmap-list/test.sh
#
# Environment:
#   KUBECONFIG  the cluster (the engine must be running against it, hosting
#               every CompositeController, i.e. without a target label selector)
#   KUBECTL     kubectl to use (default: hack/kubectl of this repository)
#   NAMESPACE   where the ConfigMapList goes; namespace NAMESPACE-source is
#               made and deleted here (default: default)
#   HOOK_CMD    the hook command; the port is appended as its last argument
#               (default: python3 <this dir>/hook.py)
#   HOOK_PORT   the hook's port (default: a free one)
#   TIMEOUT     seconds to wait for each step (default 60)
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
CRD=configmaplists.examples.metareactor.dev
CONTROLLER=configmap-list
PARENT=my-config                # my-config.yaml
CHILD=my-config-list

EXAMPLE=configmap-list
# shellcheck source=../lib/test-lib.sh
source "$REPO/examples/lib/test-lib.sh"

SOURCE=$NAMESPACE-source
CREATED_CRD=false
CREATED_CONTROLLER=false
OK=false

cleanup() {
  local rc=$?
  set +e
  if ! $OK; then
    report_failure "$rc"
    log "---- ConfigMapList $NAMESPACE/$PARENT ----"; kn get "$CRD" "$PARENT" -o yaml >&2 2>/dev/null
    log "---- ConfigMap $NAMESPACE/$CHILD ----"; kn get configmap "$CHILD" -o yaml >&2 2>/dev/null
    show_events
  fi
  log "cleaning up"
  kn delete "$CRD" "$PARENT" --ignore-not-found --wait=false >/dev/null 2>&1
  $CREATED_CONTROLLER && k delete compositecontroller "$CONTROLLER" --ignore-not-found >/dev/null
  $CREATED_CRD && k delete crd "$CRD" --ignore-not-found >/dev/null
  delete_made_namespaces
  stop_hook
  rm -f "$HOOK_LOG"
  exit "$rc"
}

# ConfigMap $1 in the source namespace, labelled listed=$2.
source_configmap() {
  k -n "$SOURCE" create configmap "$1" --from-literal=k=v --dry-run=client -o yaml | k -n "$SOURCE" apply -f - >/dev/null
  k -n "$SOURCE" label --overwrite configmap "$1" "listed=$2" >/dev/null
}

# The list names ConfigMaps $@ of the source namespace (as <namespace>/<name>, sorted) and status.count is their number.
listed() {
  local want
  want=$(printf "$SOURCE/%s\n" "$@" | sort)
  [[ $(jsonpath configmap "$CHILD" '{.data.configmaps}') == "$want" \
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

  log "making namespace $SOURCE with ConfigMaps cm-1 and cm-2 labelled listed=yes, cm-3 not"
  make_namespace "$SOURCE"
  source_configmap cm-1 yes
  source_configmap cm-2 yes
  source_configmap cm-3 no

  log "creating ConfigMapList $NAMESPACE/$PARENT"
  sed "s/SOURCE/$SOURCE/" "$HERE/my-config.yaml" | kn apply -f - >/dev/null
  wait_for "$TIMEOUT" "ConfigMap $CHILD listing cm-1 and cm-2, count 2 (is the engine running?)" listed cm-1 cm-2
  # Converged: a preview of what the engine would write now (its customize hook's related objects read) finds nothing.
  preview 0 "compositecontroller/$CONTROLLER" "$NAMESPACE/$PARENT"

  log "labelling cm-3 listed=yes: the list follows"
  k -n "$SOURCE" label --overwrite configmap cm-3 listed=yes >/dev/null
  wait_for "$TIMEOUT" "ConfigMap $CHILD listing cm-1, cm-2 and cm-3, count 3" listed cm-1 cm-2 cm-3

  OK=true
  log "PASSED in ${SECONDS}s"
  exit 0
}
