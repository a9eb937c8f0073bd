#!/usr/bin/env bash
# End-to-end test of the snapshot-schedule example against a running cluster
# and engine: starts the hooks, installs the CRDs and the MapController,
# creates PVCs and a SnapshotSchedule, checks that each selected PVC gets its
# Snapshots (one per interval, expiring after the TTL), deletes a PVC, checks
# that its Snapshots are kept until their TTL has passed, and removes
# everything it created on the way out (also on failure or Ctrl-C).
#
# Usage: examples/snapshot-schedule/test.sh
#
# Environment:
#   KUBECONFIG  the cluster (the engine must be running against it, hosting
#               every MapController, i.e. without a target label selector)
#   KUBECTL     kubectl to use (default: hack/kubectl of this repository)
#   NAMESPACE   where the PVCs and the schedule go (default: default)
#   HOOK_CMD    the hook command; the port is appended as its last argument
#               (default: python3 <this dir>/hook.py)
#   HOOK_PORT   the hook's port (default: a free one)
#   TIMEOUT     seconds a step may take beyond the schedule's own times
#               (default 60)
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
# Fully qualified everywhere: "snapshots" alone may name another group's type (the CSI VolumeSnapshot's, say).
SCHEDULES=snapshotschedules.snapshots.examples.metareactor.dev
SNAPSHOTS=snapshots.snapshots.examples.metareactor.dev
CRDS=("$SCHEDULES" "$SNAPSHOTS")
CONTROLLER=snapshot-schedule
PARENT=frequent                 # schedule.yaml
PVCS=(data-a data-b scratch)    # pvcs.yaml; scratch is not selected
MAP_KEY=metacontroller.k8s.io/map-key

EXAMPLE=snapshot-schedule
# shellcheck source=../lib/test-lib.sh
source "$REPO/examples/lib/test-lib.sh"

CREATED_CRDS=()
CREATED_CONTROLLER=false
CREATED_PVCS=false
OK=false

# On every exit: what the test needs to see when it failed, then remove what
# this run created (and only that: CRDs and PVCs that were there before stay).
cleanup() {
  local rc=$? crd pvc
  set +e
  if ! $OK; then
    report_failure "$rc"
    log "---- SnapshotSchedule $NAMESPACE/$PARENT ----"; kn get "$SCHEDULES" "$PARENT" -o yaml >&2 2>/dev/null
    log "---- Snapshots and PVCs in $NAMESPACE ----"
    kn get "$SNAPSHOTS" -L "$MAP_KEY" >&2 2>/dev/null; kn get pvc --show-labels >&2 2>/dev/null
    show_events
  fi
  log "cleaning up"
  # The controller first, so that nothing maps the PVCs while they go.
  $CREATED_CONTROLLER && k delete mapcontroller "$CONTROLLER" --ignore-not-found >/dev/null
  kn delete "$SCHEDULES" "$PARENT" --ignore-not-found --wait=false >/dev/null 2>&1
  if $CREATED_PVCS; then
    for pvc in "${PVCS[@]}"; do delete_pvc "$pvc" 2>/dev/null; done
  fi
  # Deleting a CRD deletes its objects, the Snapshots too.
  for crd in "${CREATED_CRDS[@]}"; do k delete crd "$crd" --ignore-not-found >/dev/null; done
  stop_hook
  rm -f "$HOOK_LOG"
  exit "$rc"
}

# The names of the Snapshots made from the PVC with UID $1, oldest first (the
# names end in the time they were taken); fails when kubectl does, so that a
# failed list never passes for an empty one.
snapshots_of() {
  local names
  names=$(kn get "$SNAPSHOTS" -l "$MAP_KEY=$1" -o 'jsonpath={range .items[*]}{.metadata.name}{"\n"}{end}') || return 1
  [[ -z $names ]] || sort <<<"$names"
}

has_snapshots() {
  local names
  names=$(snapshots_of "$1") || return 1
  (( $(grep -c . <<<"$names") >= $2 ))
}

# The newest Snapshot of the PVC with UID $1 was taken after Snapshot $2 (names end in the time they were taken).
newer_snapshot() {
  local names
  names=$(snapshots_of "$1") || return 1
  [[ -n $names && $(tail -n 1 <<<"$names") > "$2" ]]
}

# No Snapshot of the PVC with UID $1 is left; and none but those named in $2
# (one a line) appeared meanwhile: a detached PVC gets no new ones.
snapshots_gone() {
  local names name
  names=$(snapshots_of "$1") || return 1
  for name in $names; do
    grep -qxF "$name" <<<"$2" || fail "Snapshot $name was taken after its PVC was deleted"
  done
  [[ -z $names ]]
}

# Snapshot $1 is one of PVC $2: named <schedule>-<pvc>-<interval start>, dated
# at that start, annotated with the PVC and controlled by the schedule.
check_snapshot() {
  local name=$1 pvc=$2 got stamp taken
  [[ $name =~ ^$PARENT-$pvc-([0-9]{8})-([0-9]{6})$ ]] || fail "Snapshot $name: unexpected name"
  stamp="${BASH_REMATCH[1]}${BASH_REMATCH[2]}"
  got=$(jsonpath "$SNAPSHOTS" "$name" \
    '{.spec.pvcName}|{.metadata.annotations.metacontroller\.k8s\.io/map-input}|{.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name}/{.metadata.ownerReferences[0].controller}|{.spec.takenAt}') \
    || fail "Snapshot $name is gone"
  taken=${got##*|}
  [[ ${got%|*} == "$pvc|persistentvolumeclaims/$NAMESPACE/$pvc|SnapshotSchedule/$PARENT/true" ]] \
    || fail "Snapshot $name: pvcName|map-input|controller is '${got%|*}'"
  [[ ${taken//[-:TZ]/} == "$stamp" ]] || fail "Snapshot $name: takenAt $taken does not match its name"
}

# The schedule's status counts $1 selected PVCs, for its latest generation.
selected_pvcs_are() {
  local total observed generation
  IFS='|' read -r total observed generation < <(jsonpath "$SCHEDULES" "$PARENT" \
    '{.status.inputs.persistentvolumeclaims.total}|{.status.observedGeneration}|{.metadata.generation}') || true
  [[ $total == "$1" && -n $observed && $observed == "$generation" ]]
}

# The engine called the tombstone hook, and it answered.
tombstone_called() { grep -q '"POST /tombstone HTTP/1.1" 200' "$HOOK_LOG"; }

{
  trap cleanup EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM

  require_cluster_without mapcontroller "$CONTROLLER"
  # Never take over PVCs someone else has: our cleanup would delete them.
  for pvc in "${PVCS[@]}"; do
    ! kn get pvc "$pvc" >/dev/null 2>&1 || fail "PVC $NAMESPACE/$pvc already exists; use another NAMESPACE"
  done

  start_hook

  log "installing the CRDs and the controller"
  for crd in "${CRDS[@]}"; do
    k get crd "$crd" >/dev/null 2>&1 || CREATED_CRDS+=("$crd")
  done
  k apply -f "$HERE/crd.yaml" >/dev/null
  wait_for_crds "${CRDS[@]}"
  CREATED_CONTROLLER=true
  apply_controller "$HERE/controller.yaml"

  log "creating PVCs ${PVCS[*]} and SnapshotSchedule $NAMESPACE/$PARENT"
  CREATED_PVCS=true
  kn create -f "$HERE/pvcs.yaml" >/dev/null
  kn apply -f "$HERE/schedule.yaml" >/dev/null
  INTERVAL=$(jsonpath "$SCHEDULES" "$PARENT" '{.spec.intervalSeconds}')
  TTL=$(jsonpath "$SCHEDULES" "$PARENT" '{.spec.ttlSeconds}')
  UID_A=$(jsonpath pvc data-a '{.metadata.uid}')
  UID_B=$(jsonpath pvc data-b '{.metadata.uid}')
  UID_SCRATCH=$(jsonpath pvc scratch '{.metadata.uid}')

  wait_for "$TIMEOUT" "a Snapshot of data-a (is the engine running?)" has_snapshots "$UID_A" 1
  wait_for "$TIMEOUT" "a Snapshot of data-b" has_snapshots "$UID_B" 1
  # The newest of each: on a loaded machine an older one may have expired (TTL 15 s) by the time it is read.
  check_snapshot "$(snapshots_of "$UID_A" | tail -n 1)" data-a
  CHECKED_B=$(snapshots_of "$UID_B" | tail -n 1)
  check_snapshot "$CHECKED_B" data-b
  wait_for "$TIMEOUT" "status.inputs.persistentvolumeclaims.total 2 (scratch is not selected)" selected_pvcs_are 2
  # The map hook's answer depends on the clock (a Snapshot is due every interval): either exit code is right.
  preview "0|1" "mapcontroller/$CONTROLLER"
  [[ -z $(snapshots_of "$UID_SCRATCH") ]] || fail "PVC scratch is not selected, yet has Snapshots"

  log "waiting for the next interval (${INTERVAL}s): a newer Snapshot of data-b"
  wait_for $(( INTERVAL + TIMEOUT )) "a Snapshot of data-b newer than $CHECKED_B" newer_snapshot "$UID_B" "$CHECKED_B"
  check_snapshot "$(snapshots_of "$UID_B" | tail -n 1)" data-b

  log "waiting for the TTL (${TTL}s): the Snapshot of data-b checked first expires while data-b stays"
  wait_for $(( TTL + TIMEOUT )) "Snapshot $CHECKED_B to expire" object_gone "$SNAPSHOTS" "$CHECKED_B"
  has_snapshots "$UID_B" 1 || fail "data-b has no Snapshot left"

  log "deleting PVC data-a: its Snapshots are kept until their TTL has passed"
  delete_pvc data-a
  wait_for "$TIMEOUT" "PVC data-a to be deleted" object_gone pvc data-a
  wait_for "$TIMEOUT" "status.inputs.persistentvolumeclaims.total 1" selected_pvcs_are 1
  wait_for "$TIMEOUT" "a call of the tombstone hook" tombstone_called
  # The newest Snapshot of data-a is at most one interval old, younger than the TTL: the tombstone kept it.
  KEPT=$(snapshots_of "$UID_A")
  [[ -n $KEPT ]] || fail "the Snapshots of data-a were not kept"
  log "kept: $(tr '\n' ' ' <<<"$KEPT")"
  wait_for $(( TTL + TIMEOUT )) "the kept Snapshots of data-a to expire" snapshots_gone "$UID_A" "$KEPT"
  has_snapshots "$UID_B" 1 || fail "data-b has no Snapshot left"

  OK=true
  log "PASSED in ${SECONDS}s"
  exit 0
}
