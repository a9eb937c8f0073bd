#!/usr/bin/env bash
# End-to-end test of the configmap-digest example against a running cluster
# and engine: starts the hooks, installs the CRD and the MapController, creates
# ConfigMaps and a ConfigMapDigest, checks that each selected ConfigMap gets a
# digest that follows its content, deletes a ConfigMap, checks that its digest
# is kept while the parent says retainRemoved and goes once it no longer does,
# and removes everything it created on the way out (also on failure or Ctrl-C).
#
# Usage: examples/configmap-digest/test.sh
#
# Environment:
#   KUBECONFIG  the cluster (the engine must be running against it, hosting
#               every MapController, i.e. without a target label selector)
#   KUBECTL     kubectl to use (default: hack/kubectl of this repository)
#   NAMESPACE   where the ConfigMaps and the parent go (default: default)
#   HOOK_CMD    the hook command; the port is appended as its last argument
#               (default: python3 <this dir>/hook.py)
#   HOOK_PORT   the hook's port (default: a free one)
#   TIMEOUT     seconds to wait for each step (default 60)
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
DIGESTS=configmapdigests.examples.metareactor.dev
CRD=$DIGESTS
CONTROLLER=configmap-digest
PARENT=app-config                       # digest.yaml
CONFIGMAPS=(app-a app-b other)          # configmaps.yaml; other is not selected
DIGEST_NAMES=("$PARENT-app-a" "$PARENT-app-b")
MAP_KEY=metacontroller.k8s.io/map-key

EXAMPLE=configmap-digest
# shellcheck source=../lib/test-lib.sh
source "$REPO/examples/lib/test-lib.sh"

CREATED_CRD=false
CREATED_CONTROLLER=false
CREATED_CONFIGMAPS=false
OK=false

# On every exit: what the test needs to see when it failed, then remove what
# this run created (and only that: a CRD that was there before stays).
cleanup() {
  local rc=$? cm
  set +e
  if ! $OK; then
    report_failure "$rc"
    log "---- ConfigMapDigest $NAMESPACE/$PARENT ----"; kn get "$DIGESTS" "$PARENT" -o yaml >&2 2>/dev/null
    log "---- ConfigMaps in $NAMESPACE ----"; kn get configmaps -L "$MAP_KEY" >&2 2>/dev/null
    show_events
  fi
  log "cleaning up"
  # The controller first, so that nothing maps the ConfigMaps while they go.
  $CREATED_CONTROLLER && k delete mapcontroller "$CONTROLLER" --ignore-not-found >/dev/null
  kn delete "$DIGESTS" "$PARENT" --ignore-not-found >/dev/null 2>&1
  if $CREATED_CONFIGMAPS; then
    # The digests too: they are ConfigMaps, which the CRD's deletion leaves, and the garbage collector may not know
    # the parent's type yet (it learns a new CRD at its next discovery resync) to delete them with their parent.
    for cm in "${CONFIGMAPS[@]}" "${DIGEST_NAMES[@]}"; do
      kn delete configmap "$cm" --ignore-not-found --wait=false >/dev/null
    done
  fi
  $CREATED_CRD && k delete crd "$CRD" --ignore-not-found >/dev/null
  stop_hook
  rm -f "$HOOK_LOG"
  exit "$rc"
}

# The names of the digests made from the ConfigMap with UID $1; fails when
# kubectl does, so that a failed list never passes for an empty one.
digests_of() {
  kn get configmaps -l "$MAP_KEY=$1" -o 'jsonpath={range .items[*]}{.metadata.name}{"\n"}{end}'
}

# The ConfigMap with UID $1 has exactly one digest, named $2.
has_digest() {
  local names
  names=$(digests_of "$1") || return 1
  [[ $names == "$2" ]]
}

# What the hook's digest of ConfigMap $1 should say, computed here from the
# ConfigMap as the API server has it: source|sha256|keys.
expected_digest() {
  kn get configmap "$1" -o json | python3 -c '
import hashlib, json, sys
cm = json.load(sys.stdin)
data, binary = cm.get("data") or {}, cm.get("binaryData") or {}
content = json.dumps({"data": data, "binaryData": binary}, sort_keys=True, separators=(",", ":"))
print(cm["metadata"]["name"] + "|" + hashlib.sha256(content.encode()).hexdigest() + "|"
      + ",".join(sorted(list(data) + list(binary))))'
}

# Digest $1 describes ConfigMap $2's current content, is annotated with it and
# controlled by the parent.
digest_is_current() {
  local got want
  want=$(expected_digest "$2") || return 1
  got=$(jsonpath configmap "$1" '{.data.source}|{.data.sha256}|{.data.keys}') || return 1
  [[ $got == "$want" ]]
}

check_digest() {
  local name=$1 cm=$2 got
  digest_is_current "$name" "$cm" \
    || fail "digest $name of $cm: source|sha256|keys is '$(jsonpath configmap "$name" \
      '{.data.source}|{.data.sha256}|{.data.keys}')', not '$(expected_digest "$cm")'"
  got=$(jsonpath configmap "$name" \
    '{.metadata.annotations.metacontroller\.k8s\.io/map-input}|{.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name}/{.metadata.ownerReferences[0].controller}') \
    || fail "digest $name is gone"
  [[ $got == "configmaps/$NAMESPACE/$cm|ConfigMapDigest/$PARENT/true" ]] \
    || fail "digest $name: map-input|controller is '$got'"
}

# The parent's status counts $1 selected ConfigMaps and $2 digests, for its
# latest generation.
status_counts() {
  local inputs outputs observed generation
  IFS='|' read -r inputs outputs observed generation < <(jsonpath "$DIGESTS" "$PARENT" \
    '{.status.inputs.configmaps.total}|{.status.outputs.configmaps.total}|{.status.observedGeneration}|{.metadata.generation}') \
    || true
  [[ $inputs == "$1" && $outputs == "$2" && -n $observed && $observed == "$generation" ]]
}

# The engine called the tombstone hook, and it answered.
tombstone_called() { grep -q '"POST /tombstone HTTP/1.1" 200' "$HOOK_LOG"; }

{
  trap cleanup EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM

  require_cluster_without mapcontroller "$CONTROLLER"
  # Never take over ConfigMaps someone else has: our cleanup would delete them.
  for cm in "${CONFIGMAPS[@]}" "${DIGEST_NAMES[@]}"; do
    ! kn get configmap "$cm" >/dev/null 2>&1 || fail "ConfigMap $NAMESPACE/$cm already exists; use another NAMESPACE"
  done

  start_hook

  log "installing the CRD and the controller"
  k get crd "$CRD" >/dev/null 2>&1 || CREATED_CRD=true
  k apply -f "$HERE/crd.yaml" >/dev/null
  wait_for_crds "$CRD"
  CREATED_CONTROLLER=true
  apply_controller "$HERE/controller.yaml"

  log "creating ConfigMaps ${CONFIGMAPS[*]} and ConfigMapDigest $NAMESPACE/$PARENT"
  CREATED_CONFIGMAPS=true
  kn create -f "$HERE/configmaps.yaml" >/dev/null
  kn apply -f "$HERE/digest.yaml" >/dev/null
  UID_A=$(jsonpath configmap app-a '{.metadata.uid}')
  UID_B=$(jsonpath configmap app-b '{.metadata.uid}')
  UID_OTHER=$(jsonpath configmap other '{.metadata.uid}')

  wait_for "$TIMEOUT" "the digest of app-a (is the engine running?)" has_digest "$UID_A" "$PARENT-app-a"
  wait_for "$TIMEOUT" "the digest of app-b" has_digest "$UID_B" "$PARENT-app-b"
  check_digest "$PARENT-app-a" app-a
  check_digest "$PARENT-app-b" app-b
  wait_for "$TIMEOUT" "status: 2 ConfigMaps selected (other is not), 2 digests" status_counts 2 2
  [[ -z $(digests_of "$UID_OTHER") ]] || fail "ConfigMap other is not selected, yet has a digest"
  # The hook answers from the request alone: once the engine has converged, a preview would write nothing.
  preview 0 "mapcontroller/$CONTROLLER"

  log "changing app-b: its digest follows"
  kn patch configmap app-b --type=merge -p '{"data":{"feature-flags":"search=true\nbeta=true\n","owner":"team-b"}}' \
    >/dev/null
  wait_for "$TIMEOUT" "the digest of app-b to follow its new content" digest_is_current "$PARENT-app-b" app-b
  check_digest "$PARENT-app-b" app-b

  log "deleting app-a: its digest is kept (retainRemoved: true)"
  kn delete configmap app-a >/dev/null
  wait_for "$TIMEOUT" "status: 1 ConfigMap selected, 2 digests" status_counts 1 2
  wait_for "$TIMEOUT" "a call of the tombstone hook" tombstone_called
  has_digest "$UID_A" "$PARENT-app-a" || fail "the digest of app-a was not kept"
  [[ $(jsonpath configmap "$PARENT-app-a" '{.data.source}') == app-a ]] \
    || fail "the kept digest of app-a changed"

  log "setting retainRemoved: false: the kept digest goes at the next resync, app-b's stays"
  kn patch "$DIGESTS" "$PARENT" --type=merge -p '{"spec":{"retainRemoved":false}}' >/dev/null
  wait_for "$TIMEOUT" "the kept digest of app-a to be deleted" object_gone configmap "$PARENT-app-a"
  wait_for "$TIMEOUT" "status: 1 ConfigMap selected, 1 digest" status_counts 1 1
  check_digest "$PARENT-app-b" app-b

  OK=true
  log "PASSED in ${SECONDS}s"
  exit 0
}
