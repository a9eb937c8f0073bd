# Helpers the examples' test.sh scripts share. Source it after setting EXAMPLE
# (the example's name, which prefixes every log line), HERE (the example's
# directory) and REPO. It reads, with these defaults, the environment every
# script documents:
#   KUBECTL     kubectl to use (hack/kubectl of this repository)
#   NAMESPACE   where the example's namespaced objects go (default)
#   HOOK_CMD    the hook command; the port is appended as its last argument
#               (python3 $HERE/hook.py)
#   HOOK_PORT   the hook's port (a free one)
#   TIMEOUT     seconds to wait for each step (60)
#   APPLY_STRATEGY  the --apply-strategy the engine runs with, for its preview (dynamic-apply)
# Each script keeps its own cleanup trap: only it knows what it created.

KUBECTL=${KUBECTL:-$REPO/hack/kubectl}
NAMESPACE=${NAMESPACE:-default}
HOOK_CMD=${HOOK_CMD:-python3 $HERE/hook.py}
TIMEOUT=${TIMEOUT:-60}
# The garbage collector of kube-controller-manager notices a CRD created after
# it started only at its next discovery resync (every 30 s).
GC_TIMEOUT=$(( TIMEOUT + 60 ))
HOOK_LOG=$(mktemp "${TMPDIR:-/tmp}/$EXAMPLE-hook.XXXXXX")

log() { printf '%s test: %s\n' "$EXAMPLE" "$*" >&2; }
fail() { log "ERROR: $*"; exit 1; }

# What a failed run shows first: its exit code and the end of the hook's log.
report_failure() {
  log "FAILED (exit $1)"
  log "---- hook log ($HOOK_CMD) ----"; tail -n 30 "$HOOK_LOG" >&2
}

show_events() {
  log "---- events in $NAMESPACE ----"; kn get events --sort-by=.lastTimestamp 2>/dev/null | tail -n 20 >&2
}
k() { "$KUBECTL" --request-timeout=10s "$@"; }
kn() { k -n "$NAMESPACE" "$@"; }

# jsonpath RESOURCE NAME TEMPLATE: one field (or several, joined by the template) of a namespaced object.
jsonpath() { kn get "$1" "$2" -o "jsonpath=$3" 2>/dev/null; }

# Object $2 of resource $1 is gone (a failing kubectl is no proof of that).
object_gone() {
  local found
  found=$(kn get "$1" "$2" --ignore-not-found -o name 2>/dev/null) || return 1
  [[ -z $found ]]
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

# CRD $1 is Established (its resource is served).
crd_established() {
  [[ $(k get crd "$1" -o 'jsonpath={.status.conditions[?(@.type=="Established")].status}' 2>/dev/null) == True ]]
}

# wait_for_crds CRD...: waits until each is Established. Not `kubectl wait --for=condition=Established`: that fails
# at once instead of waiting when it reads a CRD the API server has not given any condition yet (".status.conditions
# accessor error: <nil> is of the type <nil>"), which happens right after the CRD is created on a busy machine.
wait_for_crds() {
  local crd
  for crd in "$@"; do
    wait_for "$TIMEOUT" "CRD $crd to be Established" crd_established "$crd"
  done
}

# The cluster answers, and no controller of this name exists yet (never take
# over one someone else runs, e.g. hack/quickstart.sh: applying ours would
# point it at our hook, and our cleanup would delete it).
# Usage: require_cluster_without CONTROLLER_RESOURCE NAME
require_cluster_without() {
  [[ -n ${KUBECONFIG:-} ]] || log "KUBECONFIG is not set; $KUBECTL uses its default"
  k get --raw=/readyz >/dev/null || fail "the cluster does not answer (KUBECONFIG=${KUBECONFIG:-})"
  if k get "$1" "$2" >/dev/null 2>&1; then
    fail "$1 $2 already exists (hack/quickstart.sh running?); delete it or use another cluster"
  fi
}

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

HOOK_PID=

hook_listening() {
  local rc=0
  if ! kill -0 "$HOOK_PID" 2>/dev/null; then
    wait "$HOOK_PID" || rc=$?
    HOOK_PID=
    fail "the hook exited with status $rc before it listened on 127.0.0.1:$HOOK_PORT (its log is below)"
  fi
  port_in_use "$HOOK_PORT"
}

# Starts HOOK_CMD on HOOK_PORT (a free one unless set) and waits until it listens.
start_hook() {
  HOOK_PORT=${HOOK_PORT:-$(free_port)}
  log "starting the hook on port $HOOK_PORT: $HOOK_CMD"
  # exec: HOOK_PID is the hook itself, so stop_hook reaches it.
  bash -c "exec $HOOK_CMD \"\$1\"" hook "$HOOK_PORT" </dev/null >"$HOOK_LOG" 2>&1 &
  HOOK_PID=$!
  wait_for "$TIMEOUT" "the hook to listen on 127.0.0.1:$HOOK_PORT" hook_listening
}

stop_hook() {
  if [[ -n $HOOK_PID ]]; then
    kill "$HOOK_PID" 2>/dev/null
    wait "$HOOK_PID" 2>/dev/null
  fi
}

# Applies a controller manifest with its hook URL pointed at HOOK_PORT (the
# manifests say http://127.0.0.1:8080/).
apply_controller() {
  sed "s#http://127.0.0.1:8080/#http://127.0.0.1:$HOOK_PORT/#" "$1" | k apply -f - >/dev/null
}

# preview WANT KIND/NAME [NAMESPACE/NAME]: runs `metareactor preview` of the controller (one parent, or every
# one) as the engine would sync it now, and fails unless its exit code is WANT: 0 nothing would be written (the
# engine has converged it), 1 something would, "0|1" either (a hook whose answer depends on the clock); 2, a sync
# that failed or a preview that could not run, always fails. Its summary line goes to the log.
preview() {
  local want=$1 controller=$2 out rc=0
  out=$("$REPO/engine/bin/metareactor" preview --controller "$controller" ${3:+--parent "$3"} \
    --apply-strategy "${APPLY_STRATEGY:-dynamic-apply}" --color never 2>&1) || rc=$?
  [[ $rc =~ ^($want)$ ]] \
    || fail "metareactor preview --controller $controller ${3:-} exited $rc, not $want; it printed:"$'\n'"$out"
  log "preview (exit $rc): ${out##*$'\n'}"
}

# The StorageObjectInUseProtection admission plugin gives every PVC the
# kubernetes.io/pvc-protection finalizer, which kube-controller-manager's
# pvc-protection controller removes once no pod uses the PVC. The local control
# plane does not run that controller, and no pod runs there: removing the
# finalizer is what it would do.
delete_pvc() {
  kn delete pvc "$1" --ignore-not-found --wait=false >/dev/null
  release_pvc "$1"
}

release_pvc() {
  kn patch pvc "$1" --type=merge -p '{"metadata":{"finalizers":null}}' >/dev/null 2>&1 || true
}

# Namespaces a script makes besides NAMESPACE (make_namespace), deleted by delete_made_namespaces in its cleanup.
MADE_NAMESPACES=()

# make_namespace NAME [KEY=VALUE...]: creates namespace NAME with those labels; fails if it exists already (never
# take over, and later delete, a namespace someone else uses).
make_namespace() {
  local name=$1; shift
  ! k get namespace "$name" >/dev/null 2>&1 || fail "namespace $name already exists; use another NAMESPACE"
  k create namespace "$name" >/dev/null
  MADE_NAMESPACES+=("$name")
  (( $# == 0 )) || k label namespace "$name" "$@" >/dev/null
}

delete_made_namespaces() {
  local name
  for name in "${MADE_NAMESPACES[@]}"; do k delete namespace "$name" --ignore-not-found --wait=false >/dev/null; done
}

# Object $2 of resource $1 in namespace $3 has field $4 (a jsonpath) equal to $5.
field_in_is() { [[ $(k -n "$3" get "$1" "$2" -o "jsonpath=$4" 2>/dev/null) == "$5" ]]; }

# Object $2 of resource $1 is gone from namespace $3.
gone_from() {
  local found
  found=$(k -n "$3" get "$1" "$2" --ignore-not-found -o name 2>/dev/null) || return 1
  [[ -z $found ]]
}
