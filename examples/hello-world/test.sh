#!/usr/bin/env bash
# End-to-end test of the hello-world example against a running cluster and engine:
# starts the hook, installs the CRD and the controller, creates a Hello, checks
# the greeting ConfigMap and the status, edits the Hello, deletes it, and
# removes everything it created on the way out (also on failure or Ctrl-C).
#
# Usage: examples/hello-world/test.sh
#
# Environment:
#   KUBECONFIG  the cluster (the engine must be running against it, hosting
#               every CompositeController, i.e. without a target label selector)
#   KUBECTL     kubectl to use (default: hack/kubectl of this repository)
#   NAMESPACE   where the Hello goes (default: default)
#   HOOK_CMD    the hook command; the port is appended as its last argument
#               (default: python3 <this dir>/hook.py), e.g.
#               HOOK_CMD="java -jar examples/hello-world-java/target/hello-hook.jar"
#   HOOK_PORT   the hook's port (default: a free one)
#   TIMEOUT     seconds to wait for each step (default 60); deleting the Hello
#               may take up to 30 s more, see "Garbage collection" in README.md
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
KUBECTL=${KUBECTL:-$REPO/hack/kubectl}
NAMESPACE=${NAMESPACE:-default}
HOOK_CMD=${HOOK_CMD:-python3 $HERE/hook.py}
TIMEOUT=${TIMEOUT:-60}
# The garbage collector of kube-controller-manager notices a CRD created after
# it started only at its next discovery resync (every 30 s).
GC_TIMEOUT=$(( TIMEOUT + 60 ))
# Fully qualified everywhere: a short name like "hello" can resolve to another group's Hello in a shared cluster.
CRD=hellos.examples.metareactor.dev
CONTROLLER=hello-world
PARENT=hello
CHILD=hello-greeting

log() { printf 'hello-world test: %s\n' "$*" >&2; }
k() { "$KUBECTL" --request-timeout=10s "$@"; }
kn() { k -n "$NAMESPACE" "$@"; }

HOOK_PID=
HOOK_LOG=$(mktemp "${TMPDIR:-/tmp}/hello-hook.XXXXXX")
CREATED_CRD=false
CREATED_CONTROLLER=false
OK=false

# On every exit: what the test needs to see when it failed, then remove what
# this run created (and only that: a CRD that was there before stays).
cleanup() {
  local rc=$?
  set +e
  if ! $OK; then
    log "FAILED (exit $rc)"
    log "---- hook log ($HOOK_CMD) ----"; tail -n 30 "$HOOK_LOG" >&2
    log "---- Hello $NAMESPACE/$PARENT ----"; kn get "$CRD" "$PARENT" -o yaml >&2 2>/dev/null
    log "---- events in $NAMESPACE ----"; kn get events --sort-by=.lastTimestamp 2>/dev/null | tail -n 20 >&2
  fi
  log "cleaning up"
  kn delete "$CRD" "$PARENT" --ignore-not-found --wait=false >/dev/null 2>&1
  $CREATED_CONTROLLER && k delete compositecontroller "$CONTROLLER" --ignore-not-found >/dev/null
  $CREATED_CRD && k delete crd "$CRD" --ignore-not-found >/dev/null
  if [[ -n $HOOK_PID ]]; then
    kill "$HOOK_PID" 2>/dev/null
    wait "$HOOK_PID" 2>/dev/null
  fi
  rm -f "$HOOK_LOG"
  exit "$rc"
}

fail() { log "ERROR: $*"; exit 1; }

port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

free_port() {
  local p i
  for (( i = 0; i < 100; i++ )); do
    # Below the kernel's default ephemeral range (32768-60999).
    p=$(( 20000 + (RANDOM * 32768 + RANDOM) % 12000 ))
    port_in_use "$p" || { echo "$p"; return 0; }
  done
  fail "no free loopback port found for the hook"
}

# wait_for SECONDS DESCRIPTION COMMAND...: polls COMMAND once a second until it
# succeeds; fails with DESCRIPTION after SECONDS.
wait_for() {
  local seconds=$1 what=$2; shift 2
  local deadline=$(( SECONDS + seconds ))
  until "$@"; do
    (( SECONDS < deadline )) || fail "timed out after ${seconds}s waiting for $what"
    sleep 1
  done
}

jsonpath() { kn get "$1" "$2" -o "jsonpath=$3" 2>/dev/null; }

greeting_is() { [[ $(jsonpath configmap "$CHILD" '{.data.greeting}') == "$1" ]]; }

# status.greeting is the expected one and status.observedGeneration has caught
# up with the Hello's generation, i.e. the engine synced its latest spec.
status_is() {
  local greeting observed generation
  IFS='|' read -r greeting observed generation \
    < <(jsonpath "$CRD" "$PARENT" '{.status.greeting}|{.status.observedGeneration}|{.metadata.generation}') || true
  [[ $greeting == "$1" && -n $observed && $observed == "$generation" ]]
}

observed_children_is() { [[ $(jsonpath "$CRD" "$PARENT" '{.status.observedChildren}') == "$1" ]]; }

child_gone() { ! kn get configmap "$CHILD" >/dev/null 2>&1; }

hook_listening() {
  local rc=0
  if ! kill -0 "$HOOK_PID" 2>/dev/null; then
    wait "$HOOK_PID" || rc=$?
    HOOK_PID=
    fail "the hook exited with status $rc before it listened on 127.0.0.1:$HOOK_PORT (its log is below)"
  fi
  port_in_use "$HOOK_PORT"
}

{
  trap cleanup EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM

  [[ -n ${KUBECONFIG:-} ]] || log "KUBECONFIG is not set; $KUBECTL uses its default"
  k get --raw=/readyz >/dev/null || fail "the cluster does not answer (KUBECONFIG=${KUBECONFIG:-})"
  # Never take over a controller someone else runs (e.g. hack/quickstart.sh):
  # applying ours would point it at our hook, and our cleanup would delete it.
  if k get compositecontroller "$CONTROLLER" >/dev/null 2>&1; then
    fail "compositecontroller $CONTROLLER already exists (hack/quickstart.sh running?); delete it or use another cluster"
  fi

  HOOK_PORT=${HOOK_PORT:-$(free_port)}
  log "starting the hook on port $HOOK_PORT: $HOOK_CMD"
  # exec: HOOK_PID is the hook itself, so the kill in cleanup reaches it.
  bash -c "exec $HOOK_CMD \"\$1\"" hook "$HOOK_PORT" </dev/null >"$HOOK_LOG" 2>&1 &
  HOOK_PID=$!
  wait_for 30 "the hook to listen on 127.0.0.1:$HOOK_PORT" hook_listening

  log "installing the CRD and the controller"
  k get crd "$CRD" >/dev/null 2>&1 || CREATED_CRD=true
  k apply -f "$HERE/crd.yaml" >/dev/null
  k wait --for=condition=Established --timeout="${TIMEOUT}s" "crd/$CRD" >/dev/null
  CREATED_CONTROLLER=true
  sed "s#http://127.0.0.1:8080/#http://127.0.0.1:$HOOK_PORT/#" "$HERE/controller.yaml" | k apply -f - >/dev/null

  log "creating Hello $NAMESPACE/$PARENT"
  kn apply -f "$HERE/hello.yaml" >/dev/null
  wait_for "$TIMEOUT" "ConfigMap $CHILD with greeting 'Hello, World!' (is the engine running?)" \
    greeting_is 'Hello, World!'
  wait_for "$TIMEOUT" "status.greeting 'Hello, World!' and status.observedGeneration of Hello $PARENT" \
    status_is 'Hello, World!'

  log "changing who to Metareactor"
  kn patch "$CRD" "$PARENT" --type=merge -p '{"spec":{"who":"Metareactor"}}' >/dev/null
  wait_for "$TIMEOUT" "ConfigMap $CHILD with greeting 'Hello, Metareactor!'" greeting_is 'Hello, Metareactor!'
  wait_for "$TIMEOUT" "status.greeting 'Hello, Metareactor!' with the new observedGeneration" \
    status_is 'Hello, Metareactor!'
  # The first sync saw no child yet; every later one sees the ConfigMap.
  wait_for "$TIMEOUT" "status.observedChildren 1" observed_children_is 1

  log "deleting Hello $NAMESPACE/$PARENT"
  kn delete "$CRD" "$PARENT" >/dev/null
  wait_for "$GC_TIMEOUT" "ConfigMap $CHILD to be deleted with its parent" child_gone

  OK=true
  log "PASSED"
  exit 0
}
