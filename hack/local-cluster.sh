#!/usr/bin/env bash
# A local Kubernetes control plane for development and integration tests:
# etcd + kube-apiserver + kube-controller-manager (garbage collector, namespace
# and ClusterRole aggregation controllers), all on loopback ports, built from source by
# hack/build-k8s.sh. No kubelet, no scheduler: Pods are stored, never run.
#
# Usage: hack/local-cluster.sh up|down|env|status
#        hack/local-cluster.sh restart|pause|resume COMPONENT
#        hack/local-cluster.sh compact
#   up      start (building the binaries first if they are missing); prints
#           the export lines on stdout, progress on stderr, so
#           `eval "$(hack/local-cluster.sh up)"` works. Reuses a running one.
#   down    stop exactly the processes `up` started and remove the state.
#   env     print the export lines of the running cluster.
#   status  say whether it runs and where; exits 1 if it does not.
#   restart stop one component (etcd, kube-apiserver, kube-controller-manager)
#           and start it again with the same flags and port, waiting until it
#           is healthy; with --down-for=SECONDS, it stays stopped that long;
#           with --kill, it is stopped with SIGKILL (a crash) instead of
#           SIGTERM (kube-apiserver's graceful stop can take 15 s and more).
#           For fault tests: clients see the connection drop and come back.
#   pause / resume
#           SIGSTOP / SIGCONT one component: etcd paused makes every write
#           (and consistent read) hang until it resumes.
#   compact compact etcd's history up to its current revision, so a watch
#           resumed from an older resourceVersion gets 410 Gone.
#
# Environment:
#   METAREACTOR_STATE          state dir (default ${XDG_RUNTIME_DIR:-/tmp}/metareactor-cluster)
#   METAREACTOR_CACHE          binary cache root, see hack/build-k8s.sh
#   METAREACTOR_START_TIMEOUT  seconds to wait for each component (default 180)
#   METAREACTOR_APISERVER_PORT / METAREACTOR_ETCD_PORT
#                              fixed ports instead of random free ones
#   METAREACTOR_OWNER_PID      if set, `up` also starts a watchdog that runs
#                              `down` once that process is gone (the JUnit
#                              extension passes its JVM, so a killed test run
#                              leaves nothing behind)
set -euo pipefail

HACK_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
STATE_DIR=${METAREACTOR_STATE:-${XDG_RUNTIME_DIR:-/tmp}/metareactor-cluster}
STATE_DIR=$(realpath -m -- "$STATE_DIR")
START_TIMEOUT=${METAREACTOR_START_TIMEOUT:-180}
STOP_TIMEOUT=15
# Started in this order, stopped in the reverse one.
COMPONENTS=(etcd kube-apiserver kube-controller-manager)

log() { printf 'local-cluster: %s\n' "$*" >&2; }
die() { printf 'local-cluster: ERROR: %s\n' "$*" >&2; exit 1; }

usage() {
  sed -n '2,/^set -euo/{/^set -euo/d; s/^# \{0,1\}//; p}' "${BASH_SOURCE[0]}" >&2
  exit 2
}

# ---------------------------------------------------------------- processes

pid_file() { echo "$STATE_DIR/pids/$1.pid"; }

# The pid recorded for a component, if that process still runs the binary we
# started (argv[0] is the absolute path), so a recycled pid is never touched.
live_pid() {
  local f pid exe argv0 stat
  f=$(pid_file "$1")
  [[ -f $f ]] || return 1
  read -r pid exe < "$f" || true
  [[ $pid =~ ^[0-9]+$ ]] || return 1
  [[ -r /proc/$pid/cmdline ]] || return 1
  IFS= read -r -d '' argv0 < "/proc/$pid/cmdline" 2>/dev/null || return 1
  [[ $argv0 == "$exe" ]] || return 1
  # A zombie (exited, not yet reaped) is not running.
  stat=$(proc_state "$pid") || return 1
  [[ $stat != Z ]] || return 1
  echo "$pid"
}

# The one-letter state of a process (R, S, Z, ...); fails if it is gone.
proc_state() {
  local s
  s=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
  s=${s##*) }
  echo "${s:0:1}"
}

# stop_component NAME [group]: TERM to the recorded pid, KILL if it is still
# there after STOP_TIMEOUT. With `group`, to its whole process group instead
# (it must have been started under setsid, so that the group is its own).
stop_component() {
  local c=$1 pid i target
  pid=$(live_pid "$c") || { rm -f "$(pid_file "$c")"; return 0; }
  target=$pid
  [[ ${2:-} == group ]] && target=-$pid
  log "stopping $c (pid $pid)"
  kill -TERM -- "$target" 2>/dev/null || true
  for (( i = 0; i < STOP_TIMEOUT * 10; i++ )); do
    live_pid "$c" >/dev/null || break
    sleep 0.1
  done
  if live_pid "$c" >/dev/null; then
    log "$c (pid $pid) ignored SIGTERM for ${STOP_TIMEOUT}s; sending SIGKILL"
    kill -KILL -- "$target" 2>/dev/null || true
    for (( i = 0; i < 50; i++ )); do live_pid "$c" >/dev/null || break; sleep 0.1; done
  fi
  rm -f "$(pid_file "$c")"
}

# Start time (clock ticks since boot) of a process: with the pid, it
# identifies the process even if the pid is reused later.
proc_start_time() {
  local s
  s=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
  s=${s##*) }
  # shellcheck disable=SC2086
  set -- $s
  echo "${20}"
}

# The watchdog runs under setsid, so its process group is its own: stopping
# the group also stops the `sleep` it is waiting for, which would otherwise
# outlive `down` by up to 2 s.
stop_watchdog() {
  local pid
  # The watchdog's own `down` must not kill itself.
  if pid=$(live_pid watchdog) && [[ $pid != "${WATCHDOG_SELF:-}" ]] \
      && tr '\0' ' ' < "/proc/$pid/cmdline" | grep -q -- ' __watchdog '; then
    stop_component watchdog group
  fi
  rm -f "$(pid_file watchdog)"
}

stop_all() {
  local i
  stop_watchdog
  for (( i = ${#COMPONENTS[@]} - 1; i >= 0; i-- )); do stop_component "${COMPONENTS[i]}"; done
}

remove_state() {
  local data
  if [[ -f $STATE_DIR/etcd-data-dir ]]; then
    data=$(< "$STATE_DIR/etcd-data-dir")
    # Only ever remove the directory this script created.
    [[ $data == */metareactor-etcd.* && -d $data ]] && rm -rf "$data"
  fi
  rm -rf "$STATE_DIR"
}

# All components recorded and alive.
running() {
  local c
  [[ -f $STATE_DIR/env ]] || return 1
  for c in "${COMPONENTS[@]}"; do live_pid "$c" >/dev/null || return 1; done
}

# Anything recorded still alive (for cleaning up a half-dead cluster).
any_alive() {
  local c
  for c in "${COMPONENTS[@]}"; do live_pid "$c" >/dev/null && return 0; done
  return 1
}

# Serializes up and down on one state dir: holds a flock on fd 9, open on
# $STATE_DIR.lock, until this script exits. The holder removes the file as
# its last step (release_lock), so it exists only while someone holds it.
# Removing a flock'ed file is racy on its own: a waiter that opened the old
# file wakes up holding a lock on a file no longer at that path, while a
# newcomer may have created and locked a new one. Hence, after flock, check
# that the path still names the file fd 9 is open on; if not, start over.
take_lock() {
  local waited=false
  mkdir -p "$(dirname "$STATE_DIR")"
  while :; do
    exec 9>"$STATE_DIR.lock"
    if ! flock -n 9; then
      $waited || log "waiting for another local-cluster.sh on $STATE_DIR"
      waited=true
      flock 9
    fi
    [[ $(stat -L -c %d:%i /dev/fd/9) == "$(stat -c %d:%i "$STATE_DIR.lock" 2>/dev/null)" ]] && break
  done
  # On every exit, including die; cmd_up replaces it with on_up_exit, which
  # ends with release_lock too.
  trap release_lock EXIT
}

# Removes the lock file while still holding the lock (see take_lock), then
# lets go of it; the last thing a command that took the lock does.
release_lock() {
  rm -f "$STATE_DIR.lock"
  exec 9>&-
}

# ---------------------------------------------------------------- helpers

port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

declare -A TAKEN_PORTS=()
# pick_port VAR COMPONENT [FIXED]: sets VAR to FIXED (which must be free) or
# to a random free loopback port not yet handed out by this invocation.
pick_port() {
  local -n out=$1
  local p i
  if [[ -n ${3:-} ]]; then
    port_in_use "$3" && die "port 127.0.0.1:$3 for $2 is already in use"
    TAKEN_PORTS[$3]=1
    out=$3
    return 0
  fi
  for (( i = 0; i < 200; i++ )); do
    # Below the kernel's default ephemeral range (32768-60999).
    p=$(( 20000 + (RANDOM * 32768 + RANDOM) % 12000 ))
    [[ -n ${TAKEN_PORTS[$p]:-} ]] && continue
    port_in_use "$p" && continue
    TAKEN_PORTS[$p]=1
    out=$p
    return 0
  done
  die "no free loopback port found for $2"
}

# Any failure of `up` after it created the state dir: stop what it started
# and remove the state, so nothing is left running. Success or not, the lock
# file goes last.
UP_OK=false
on_up_exit() {
  local rc=$?
  if ! $UP_OK; then
    if [[ -s $STATE_DIR/logs/pki.log && ! -s $STATE_DIR/kubeconfig ]]; then
      log "openssl output:"; tail -n 20 "$STATE_DIR/logs/pki.log" >&2
    fi
    log "up failed (exit $rc); stopping what was started and removing $STATE_DIR"
    stop_all
    remove_state
  fi
  release_lock
}

# Failure while starting: tell which component, show its log, stop everything
# this invocation started and remove the state.
fail() {
  local c=$1; shift
  local logf="$STATE_DIR/logs/$c.log"
  printf 'local-cluster: ERROR: %s\n' "$*" >&2
  if [[ -s $logf ]]; then
    printf 'local-cluster: ---- last 40 lines of %s ----\n' "$logf" >&2
    tail -n 40 "$logf" >&2
    printf 'local-cluster: ---- end of %s ----\n' "$logf" >&2
  else
    printf 'local-cluster: %s wrote nothing to %s\n' "$c" "$logf" >&2
  fi
  exit 1   # on_up_exit cleans up
}

start_component() { # NAME BINARY ARGS...
  local c=$1 exe=$2; shift 2
  [[ -x $exe ]] || fail "$c" "binary $exe is missing or not executable"
  # setsid: own session, no controlling terminal, so a Ctrl-C in the shell
  # that ran `up` does not reach it. All fds go to the log; fd 9 (our lock)
  # and the caller's pipes are not inherited, so whoever reads our stdout
  # sees EOF when this script exits.
  # The command line, NUL-separated, for `restart`.
  mkdir -p "$STATE_DIR/cmdlines"
  printf '%s\0' "$exe" "$@" > "$STATE_DIR/cmdlines/$c"
  setsid "$exe" "$@" </dev/null >>"$STATE_DIR/logs/$c.log" 2>&1 9>&- &
  local pid=$! i
  echo "$pid $exe" > "$(pid_file "$c")"
  # $! is the forked subshell, which execs setsid, which execs the binary.
  # Until that lands, /proc/$pid/cmdline still says bash or setsid and
  # live_pid would call the component dead (seen on a loaded machine: "etcd
  # exited" with an empty log), so wait for the exec or for a real exit.
  for (( i = 0; i < 200; i++ )); do
    live_pid "$c" >/dev/null && break
    if [[ $(proc_state "$pid" || echo gone) == @(Z|gone) ]]; then
      fail "$c" "$c (pid $pid) exited right after it was started"
    fi
    sleep 0.05
  done
  live_pid "$c" >/dev/null || fail "$c" "$c (pid $pid) did not exec $exe within 10s"
  log "started $c (pid $pid)"
}

# wait_until COMPONENT DESCRIPTION COMMAND...: polls COMMAND until it succeeds;
# fails if any started component dies or the timeout passes.
wait_until() {
  local c=$1 what=$2; shift 2
  local deadline=$(( SECONDS + START_TIMEOUT )) s
  while ! "$@" >/dev/null 2>&1; do
    for s in "${COMPONENTS[@]}"; do
      [[ -f $(pid_file "$s") ]] || continue
      live_pid "$s" >/dev/null || fail "$s" "$s exited while waiting for $what"
    done
    (( SECONDS < deadline )) || fail "$c" "timed out after ${START_TIMEOUT}s waiting for $what"
    sleep 0.25
  done
}

http_ok() { # HOST PORT PATH: plain-HTTP GET answers 200 (etcd's /health)
  local status
  exec 3<>"/dev/tcp/$1/$2" || return 1
  printf 'GET %s HTTP/1.0\r\nHost: %s\r\n\r\n' "$3" "$1" >&3
  IFS= read -r -t 5 status <&3 || { exec 3<&-; return 1; }
  exec 3<&-
  [[ $status == HTTP/1.?\ 200* ]]
}

kubectl_admin() { "$BIN_DIR/kubectl" --kubeconfig="$STATE_DIR/kubeconfig" --request-timeout=5s "$@" </dev/null; }

kcm_healthy() {
  # /healthz is always allowed; the serving cert is the self-signed one
  # kube-controller-manager writes to its --cert-dir at start.
  [[ -s $STATE_DIR/kcm-certs/kube-controller-manager.crt ]] || return 1
  "$BIN_DIR/kubectl" --kubeconfig="$STATE_DIR/kubeconfig" --server="https://127.0.0.1:$KCM_PORT" \
    --certificate-authority="$STATE_DIR/kcm-certs/kube-controller-manager.crt" \
    --request-timeout=5s get --raw=/healthz </dev/null
}

env_lines() {
  cat "$STATE_DIR/env"
}

# ---------------------------------------------------------------- pki

openssl_quiet() { openssl "$@" 2>>"$STATE_DIR/logs/pki.log"; }

gen_pki() {
  local d="$STATE_DIR/pki"
  mkdir -p "$d"
  command -v openssl >/dev/null || die "openssl is required"
  # CA
  openssl_quiet req -x509 -newkey rsa:2048 -nodes -sha256 -days 3650 \
    -keyout "$d/ca.key" -out "$d/ca.crt" -subj "/CN=metareactor-local-ca" \
    -addext "basicConstraints=critical,CA:TRUE" \
    -addext "keyUsage=critical,keyCertSign,cRLSign"
  # leaf NAME SUBJECT EXTENSIONS...
  leaf() {
    local name=$1 subj=$2; shift 2
    openssl_quiet req -newkey rsa:2048 -nodes -sha256 -keyout "$d/$name.key" -out "$d/$name.csr" -subj "$subj"
    printf '%s\n' "$@" > "$d/$name.ext"
    openssl_quiet x509 -req -sha256 -days 3650 -in "$d/$name.csr" -CA "$d/ca.crt" -CAkey "$d/ca.key" \
      -CAcreateserial -out "$d/$name.crt" -extfile "$d/$name.ext"
    rm -f "$d/$name.csr" "$d/$name.ext"
  }
  leaf apiserver "/CN=kube-apiserver" \
    "basicConstraints=critical,CA:FALSE" \
    "keyUsage=critical,digitalSignature,keyEncipherment" \
    "extendedKeyUsage=serverAuth" \
    "subjectAltName=IP:127.0.0.1,IP:10.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local"
  # Members of system:masters are cluster-admin under RBAC.
  leaf admin "/O=system:masters/CN=metareactor-admin" \
    "basicConstraints=critical,CA:FALSE" \
    "keyUsage=critical,digitalSignature,keyEncipherment" \
    "extendedKeyUsage=clientAuth"
  # The identity an engine under measurement uses (benchmarks/load): the audit policy logs only its requests.
  leaf engine "/O=system:masters/CN=metareactor-engine" \
    "basicConstraints=critical,CA:FALSE" \
    "keyUsage=critical,digitalSignature,keyEncipherment" \
    "extendedKeyUsage=clientAuth"
  leaf controller-manager "/O=system:masters/CN=metareactor-kube-controller-manager" \
    "basicConstraints=critical,CA:FALSE" \
    "keyUsage=critical,digitalSignature,keyEncipherment" \
    "extendedKeyUsage=clientAuth"
  # Service-account token signing key pair.
  openssl_quiet genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$d/sa.key"
  openssl_quiet pkey -in "$d/sa.key" -pubout -out "$d/sa.pub"
  chmod 600 "$d"/*.key
}

b64() { base64 -w0 < "$1"; }

write_kubeconfig() { # FILE USER(cert name)
  cat > "$1" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: metareactor-local
  cluster:
    server: https://127.0.0.1:$API_PORT
    certificate-authority-data: $(b64 "$STATE_DIR/pki/ca.crt")
users:
- name: $2
  user:
    client-certificate-data: $(b64 "$STATE_DIR/pki/$2.crt")
    client-key-data: $(b64 "$STATE_DIR/pki/$2.key")
contexts:
- name: metareactor-local
  context:
    cluster: metareactor-local
    user: $2
    namespace: default
current-context: metareactor-local
EOF
  chmod 600 "$1"
}

# ---------------------------------------------------------------- commands

cmd_up() {
  local t0=$SECONDS
  take_lock
  if running; then
    log "already running (state $STATE_DIR); reusing it"
    env_lines
    return 0
  fi
  if [[ -d $STATE_DIR ]]; then
    if any_alive; then
      log "found a partly dead cluster in $STATE_DIR; stopping what is left of it"
    else
      log "removing stale state $STATE_DIR"
    fi
    stop_all
    remove_state
  fi

  # Binaries first: a cold build takes a long time and must not count
  # against the start timeouts.
  BIN_DIR=$("$HACK_DIR/build-k8s.sh" 9>&- | tail -n 1) || die "hack/build-k8s.sh failed (see above)"
  [[ -d $BIN_DIR ]] || die "hack/build-k8s.sh did not report a bin dir"
  local b
  for b in etcd kube-apiserver kube-controller-manager kubectl; do
    [[ -x $BIN_DIR/$b ]] || die "binary $BIN_DIR/$b is missing; run hack/build-k8s.sh --force"
  done

  trap on_up_exit EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  mkdir -p "$STATE_DIR/pids" "$STATE_DIR/logs"
  chmod 700 "$STATE_DIR"
  ln -s "$BIN_DIR" "$STATE_DIR/bin"

  local etcd_peer_port
  pick_port ETCD_PORT etcd "${METAREACTOR_ETCD_PORT:-}"
  pick_port etcd_peer_port etcd-peer
  pick_port API_PORT kube-apiserver "${METAREACTOR_APISERVER_PORT:-}"
  pick_port KCM_PORT kube-controller-manager

  gen_pki
  write_kubeconfig "$STATE_DIR/kubeconfig" admin
  write_kubeconfig "$STATE_DIR/controller-manager.kubeconfig" controller-manager
  write_kubeconfig "$STATE_DIR/engine.kubeconfig" engine
  # Every request of the user metareactor-engine (engine.kubeconfig), and nobody else's, goes to logs/audit.log:
  # the load harness counts an engine's requests by verb and resource from it. Batched, so no request waits for
  # the log; nothing is logged for the tests, which use the admin identity.
  cat > "$STATE_DIR/audit-policy.yaml" <<EOF
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: Metadata
  users: [metareactor-engine]
- level: None
EOF

  # etcd: data on tmpfs when there is one; fsync off (test data only).
  local shm=/dev/shm data
  [[ -d $shm && -w $shm ]] || shm=${TMPDIR:-/tmp}
  data=$(mktemp -d "$shm/metareactor-etcd.XXXXXX")
  echo "$data" > "$STATE_DIR/etcd-data-dir"
  local etcd_args=(
    --name=metareactor --data-dir="$data"
    --listen-client-urls="http://127.0.0.1:$ETCD_PORT" --advertise-client-urls="http://127.0.0.1:$ETCD_PORT"
    --listen-peer-urls="http://127.0.0.1:$etcd_peer_port" --initial-advertise-peer-urls="http://127.0.0.1:$etcd_peer_port"
    --initial-cluster="metareactor=http://127.0.0.1:$etcd_peer_port"
    --log-level=warn
  )
  if "$BIN_DIR/etcd" --help 2>&1 | grep -q -- '--unsafe-no-fsync'; then etcd_args+=(--unsafe-no-fsync); fi
  start_component etcd "$BIN_DIR/etcd" "${etcd_args[@]}"
  wait_until etcd "etcd /health on 127.0.0.1:$ETCD_PORT" http_ok 127.0.0.1 "$ETCD_PORT" /health

  local pki="$STATE_DIR/pki"
  mkdir -p "$STATE_DIR/apiserver-certs" "$STATE_DIR/kcm-certs"
  start_component kube-apiserver "$BIN_DIR/kube-apiserver" \
    --etcd-servers="http://127.0.0.1:$ETCD_PORT" \
    --bind-address=127.0.0.1 --secure-port="$API_PORT" \
    --advertise-address=127.0.0.1 --endpoint-reconciler-type=none \
    --cert-dir="$STATE_DIR/apiserver-certs" \
    --tls-cert-file="$pki/apiserver.crt" --tls-private-key-file="$pki/apiserver.key" \
    --client-ca-file="$pki/ca.crt" \
    --authorization-mode=RBAC \
    --service-account-issuer=https://kubernetes.default.svc.cluster.local \
    --service-account-key-file="$pki/sa.pub" --service-account-signing-key-file="$pki/sa.key" \
    --service-cluster-ip-range=10.0.0.0/24 \
    --disable-admission-plugins=ServiceAccount \
    --allow-privileged=true \
    --audit-policy-file="$STATE_DIR/audit-policy.yaml" \
    --audit-log-path="$STATE_DIR/logs/audit.log" --audit-log-format=json \
    --audit-log-mode=batch --audit-log-batch-max-wait=1s --audit-log-maxsize=4096 --audit-log-maxbackup=1 \
    --profiling=false
  wait_until kube-apiserver "kube-apiserver /readyz on https://127.0.0.1:$API_PORT" kubectl_admin get --raw=/readyz
  wait_until kube-apiserver "namespace default" kubectl_admin get namespace default

  start_component kube-controller-manager "$BIN_DIR/kube-controller-manager" \
    --kubeconfig="$STATE_DIR/controller-manager.kubeconfig" \
    --controllers=garbage-collector-controller,namespace-controller,clusterrole-aggregation-controller \
    --leader-elect=false \
    --kube-api-qps=100 --kube-api-burst=200 \
    --bind-address=127.0.0.1 --secure-port="$KCM_PORT" \
    --cert-dir="$STATE_DIR/kcm-certs" \
    --profiling=false
  wait_until kube-controller-manager "kube-controller-manager /healthz on https://127.0.0.1:$KCM_PORT" kcm_healthy

  if [[ -n ${METAREACTOR_OWNER_PID:-} ]]; then
    local owner_start
    owner_start=$(proc_start_time "$METAREACTOR_OWNER_PID") \
      || die "METAREACTOR_OWNER_PID=$METAREACTOR_OWNER_PID is not a running process"
    setsid "$BASH" "$HACK_DIR/local-cluster.sh" __watchdog "$METAREACTOR_OWNER_PID" "$owner_start" "$STATE_DIR" \
      </dev/null >>"$STATE_DIR/logs/watchdog.log" 2>&1 9>&- &
    echo "$! $BASH" > "$(pid_file watchdog)"
    log "started watchdog (pid $!): runs down when process $METAREACTOR_OWNER_PID exits"
  fi

  cat > "$STATE_DIR/env" <<EOF
export KUBECONFIG='$STATE_DIR/kubeconfig'
export METAREACTOR_ENGINE_KUBECONFIG='$STATE_DIR/engine.kubeconfig'
export METAREACTOR_AUDIT_LOG='$STATE_DIR/logs/audit.log'
export METAREACTOR_APISERVER='https://127.0.0.1:$API_PORT'
export METAREACTOR_K8S_BIN='$BIN_DIR'
EOF
  cat > "$STATE_DIR/endpoints" <<EOF
kube-apiserver https://127.0.0.1:$API_PORT
etcd http://127.0.0.1:$ETCD_PORT
kube-controller-manager https://127.0.0.1:$KCM_PORT
EOF
  UP_OK=true
  log "ready in $(( SECONDS - t0 ))s: apiserver https://127.0.0.1:$API_PORT (state $STATE_DIR)"
  env_lines
}

cmd_down() {
  take_lock
  if [[ ! -d $STATE_DIR ]]; then
    log "not running (no state at $STATE_DIR)"
    return 0
  fi
  stop_all
  remove_state
  log "stopped; removed $STATE_DIR"
}

cmd_env() {
  running || die "not running (state $STATE_DIR); run: hack/local-cluster.sh up"
  env_lines
}

cmd_status() {
  if ! running; then
    if [[ -d $STATE_DIR ]] && any_alive; then
      echo "partly running (state $STATE_DIR): some components died; run: hack/local-cluster.sh down"
    else
      echo "not running (state $STATE_DIR)"
    fi
    return 1
  fi
  echo "running (state $STATE_DIR)"
  local c
  for c in "${COMPONENTS[@]}"; do
    printf '  %-24s pid %-8s %s\n' "$c" "$(live_pid "$c")" \
      "$(awk -v c="$c" '$1 == c { print $2 }' "$STATE_DIR/endpoints")"
  done
  if live_pid watchdog >/dev/null; then
    printf '  %-24s pid %-8s %s\n' watchdog "$(live_pid watchdog)" "stops the cluster when process $(tr '\0' ' ' < "/proc/$(live_pid watchdog)/cmdline" | awk '{ print $4 }') exits"
  fi
  echo "  kubeconfig               $STATE_DIR/kubeconfig"
  echo "  logs                     $STATE_DIR/logs"
}

# The ports and binaries of the running cluster, for the commands that act on one component.
load_running() {
  running || die "not running (state $STATE_DIR); run: hack/local-cluster.sh up"
  BIN_DIR=$STATE_DIR/bin
  ETCD_PORT=$(awk '$1 == "etcd" { sub(/.*:/, "", $2); print $2 }' "$STATE_DIR/endpoints")
  API_PORT=$(awk '$1 == "kube-apiserver" { sub(/.*:/, "", $2); print $2 }' "$STATE_DIR/endpoints")
  KCM_PORT=$(awk '$1 == "kube-controller-manager" { sub(/.*:/, "", $2); print $2 }' "$STATE_DIR/endpoints")
}

component_arg() { # NAME: dies unless it is one of the components
  local c
  for c in "${COMPONENTS[@]}"; do [[ $c == "${1:-}" ]] && return 0; done
  die "unknown component '${1:-}' (one of: ${COMPONENTS[*]})"
}

wait_healthy() { # COMPONENT
  case $1 in
    etcd) wait_until etcd "etcd /health on 127.0.0.1:$ETCD_PORT" http_ok 127.0.0.1 "$ETCD_PORT" /health ;;
    kube-apiserver) wait_until kube-apiserver "kube-apiserver /readyz on https://127.0.0.1:$API_PORT" \
      kubectl_admin get --raw=/readyz ;;
    kube-controller-manager) wait_until kube-controller-manager \
      "kube-controller-manager /healthz on https://127.0.0.1:$KCM_PORT" kcm_healthy ;;
  esac
}

component_port() { # COMPONENT: the port it listens on for clients
  case $1 in
    etcd) echo "$ETCD_PORT" ;;
    kube-apiserver) echo "$API_PORT" ;;
    kube-controller-manager) echo "$KCM_PORT" ;;
  esac
}

# A process that live_pid already calls gone (its memory released, its cmdline empty) may still hold its files,
# listening sockets included, for a moment while it exits: on a loaded machine, a component started again at once
# on the same port then failed with "address already in use". Waits (at most 10 s) until PID holds no file.
wait_files_closed() { # PID
  local i
  for (( i = 0; i < 200; i++ )); do
    [[ -n $(ls -A "/proc/$1/fd" 2>/dev/null) ]] || return 0
    sleep 0.05
  done
}

wait_port_free() { # PORT
  local i
  for (( i = 0; i < 200; i++ )); do
    port_in_use "$1" || return 0
    sleep 0.05
  done
  die "port 127.0.0.1:$1 is still in use"
}

cmd_restart() { # COMPONENT [--down-for=SECONDS] [--kill]
  local c=${1:-} down_for=0 kill=false t0=$SECONDS arg pid i
  component_arg "$c"
  for arg in "${@:2}"; do
    case $arg in
      --down-for=*) down_for=${arg#--down-for=}; [[ $down_for =~ ^[0-9]+$ ]] || die "bad $arg" ;;
      --kill) kill=true ;;
      *) die "unknown option $arg for restart" ;;
    esac
  done
  take_lock
  load_running
  local -a cmdline
  mapfile -d '' cmdline < "$STATE_DIR/cmdlines/$c"
  pid=$(live_pid "$c") || die "$c is not running"
  if $kill; then
    log "killing $c (pid $pid)"
    kill -KILL "$pid"
    for (( i = 0; i < 100; i++ )); do live_pid "$c" >/dev/null || break; sleep 0.05; done
    rm -f "$(pid_file "$c")"
  fi
  stop_component "$c"
  wait_files_closed "$pid"
  wait_port_free "$(component_port "$c")"
  (( down_for > 0 )) && { log "$c stays down for ${down_for}s"; sleep "$down_for"; }
  start_component "$c" "${cmdline[@]}"
  wait_healthy "$c"
  log "restarted $c in $(( SECONDS - t0 ))s"
}

cmd_signal() { # SIGNAL COMPONENT
  local signal=$1 c=${2:-} pid
  component_arg "$c"
  take_lock
  load_running
  pid=$(live_pid "$c") || die "$c is not running"
  kill -"$signal" "$pid"
  log "sent SIG$signal to $c (pid $pid)"
}

# POSTs JSON to etcd's gRPC gateway (plain HTTP on its client port) and prints the answer's body.
etcd_post() { # PATH JSON
  local line body=""
  exec 3<>"/dev/tcp/127.0.0.1/$ETCD_PORT" || die "cannot connect to etcd on 127.0.0.1:$ETCD_PORT"
  printf 'POST %s HTTP/1.0\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s' \
    "$1" "${#2}" "$2" >&3
  IFS= read -r -t 10 line <&3 || die "etcd did not answer $1"
  [[ $line == HTTP/1.?\ 200* ]] || die "etcd answered $1 with: $line"
  while IFS= read -r -t 10 line <&3 && [[ $line != $'\r' && -n $line ]]; do :; done
  IFS= read -r -d '' -t 10 body <&3 || true
  exec 3<&-
  printf '%s' "$body"
}

cmd_compact() {
  local answer revision
  take_lock
  load_running
  # The range of one key answers with the header, which holds the store's current revision.
  answer=$(etcd_post /v3/kv/range '{"key":"Lw==","limit":1,"keys_only":true}')
  [[ $answer =~ \"revision\":\"([0-9]+)\" ]] || die "no revision in etcd's answer: $answer"
  revision=${BASH_REMATCH[1]}
  etcd_post /v3/kv/compaction "{\"revision\":\"$revision\",\"physical\":true}" >/dev/null
  log "compacted etcd up to revision $revision"
}

cmd_watchdog() { # OWNER_PID OWNER_START_TIME
  while [[ $(proc_start_time "$1" 2>/dev/null) == "$2" ]]; do sleep 2; done
  log "$(date -u +%FT%TZ) process $1 is gone; stopping the cluster"
  WATCHDOG_SELF=$$ cmd_down
}

# One compound command, parsed before it runs: editing this file while an
# `up` or a watchdog runs cannot make bash execute a half-read line.
{
  case "${1:-}" in
    up) cmd_up ;;
    __watchdog) STATE_DIR=${4:?}; cmd_watchdog "${2:?}" "${3:?}" ;;
    down) cmd_down ;;
    env) cmd_env ;;
    status) cmd_status ;;
    restart) cmd_restart "${@:2}" ;;
    pause) cmd_signal STOP "${2:-}" ;;
    resume) cmd_signal CONT "${2:-}" ;;
    compact) cmd_compact ;;
    *) usage ;;
  esac
  exit
}
