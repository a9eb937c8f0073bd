#!/usr/bin/env bash
# The quick start: the engine on a local control plane, with the hello-world
# example (examples/hello-world) installed and a Hello to act on.
#
# Usage: hack/quickstart.sh
#   1. builds engine/target/metareactor.jar if it is missing (Maven);
#   2. starts the local control plane, or reuses the running one
#      (hack/local-cluster.sh up; the first run builds Kubernetes from Go
#      modules, which takes minutes);
#   3. installs the Metacontroller CRDs (manifests/production/metacontroller-crds-v1.yaml);
#   4. starts the example's sync hook in the background on a free port;
#   5. applies the example's CRD, its controller (pointed at that port) and
#      examples/hello-world/hello.yaml;
#   6. runs the engine in the foreground until Ctrl-C or SIGTERM, which stop
#      the engine (exit 0) and the hook. The cluster and the example objects
#      stay; `hack/local-cluster.sh down` stops the cluster.
#
# Environment:
#   METAREACTOR_STATE  state dir of the local control plane (see hack/local-cluster.sh)
#   HOOK_CMD           the hook, run in the repository root with the port appended
#                      (default: python3 examples/hello-world/hook.py), e.g.
#                      HOOK_CMD="java -jar examples/hello-world-java/target/hello-hook.jar"
#   MVN_FLAGS          extra Maven flags for the build (e.g. -o to stay offline)
#   METRICS_PORT / HEALTH_PORT
#                      the engine's /metrics and /healthz+/readyz ports on 127.0.0.1
#                      (default 9999 and 8081, or free ones when those are taken)
set -euo pipefail

HACK_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HACK_DIR/.." && pwd)
EXAMPLE=examples/hello-world
JAR=engine/target/metareactor.jar
HOOK_CMD=${HOOK_CMD:-python3 $EXAMPLE/hook.py}
KUBECTL=$HACK_DIR/kubectl

log() { printf 'quickstart: %s\n' "$*" >&2; }
die() { printf 'quickstart: ERROR: %s\n' "$*" >&2; exit 1; }

port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# established CRD: waits up to 60 s until the CRD's resource is served. Not
# `kubectl wait --for=condition=Established`: that fails at once instead of
# waiting when it reads a CRD the API server has not given any condition yet,
# which happens right after the CRD is applied on a busy machine.
established() {
  local i
  for (( i = 0; i < 240; i++ )); do
    [[ $("$KUBECTL" get crd "$1" -o 'jsonpath={.status.conditions[?(@.type=="Established")].status}' \
      2>/dev/null) == True ]] && return 0
    sleep 0.25
  done
  die "CRD $1 is not Established after 60 s"
}

# pick_port PREFERRED: PREFERRED if it is free, else a random free port below
# the kernel's ephemeral range (32768-60999).
pick_port() {
  local p i
  if [[ -n ${1:-} ]] && ! port_in_use "$1"; then echo "$1"; return 0; fi
  for (( i = 0; i < 200; i++ )); do
    p=$(( 20000 + (RANDOM * 32768 + RANDOM) % 12000 ))
    port_in_use "$p" || { echo "$p"; return 0; }
  done
  die "no free loopback port found"
}

HOOK_PID=
ENGINE_PID=
WATCH_PID=
# Everything this script started in the background goes with it, however it
# ends (engine exit, Ctrl-C during the setup, a failed step).
on_exit() {
  local rc=$?
  set +e
  [[ -n $WATCH_PID ]] && kill "$WATCH_PID" 2>/dev/null
  if [[ -n $ENGINE_PID ]] && kill -0 "$ENGINE_PID" 2>/dev/null; then
    kill -TERM "$ENGINE_PID"
    wait "$ENGINE_PID"
  fi
  if [[ -n $HOOK_PID ]]; then
    kill "$HOOK_PID" 2>/dev/null
    wait "$HOOK_PID" 2>/dev/null
    log "stopped the hook"
  fi
  exit "$rc"
}

# Ctrl-C / SIGTERM while the engine runs: ask it to stop and let the wait loop
# collect its exit code. TERM, not INT: bash starts background commands with
# SIGINT ignored, and the JVM keeps an ignored SIGINT ignored.
stop_engine() {
  log "stopping the engine"
  kill -TERM "$ENGINE_PID" 2>/dev/null || true
}

start_hook() { # PORT
  # exec: HOOK_PID is the hook itself. Its output (one line per call for
  # hook.py) goes to the terminal along with the engine's log.
  bash -c "exec $HOOK_CMD \"\$1\"" hook "$1" </dev/null &
  HOOK_PID=$!
  local i
  for (( i = 0; i < 300; i++ )); do
    kill -0 "$HOOK_PID" 2>/dev/null || { HOOK_PID=; die "the hook exited before it listened on port $1: $HOOK_CMD"; }
    port_in_use "$1" && return 0
    sleep 0.1
  done
  die "the hook did not listen on 127.0.0.1:$1 within 30s: $HOOK_CMD"
}

# One compound command, parsed before it runs: editing this file while the
# engine runs cannot make bash execute a half-read line.
{
  trap on_exit EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  cd "$REPO"

  command -v java >/dev/null || die "java (17 or later) is required"
  if [[ ! -f $JAR ]]; then
    command -v mvn >/dev/null || die "$JAR is missing and mvn is not installed to build it"
    log "building $JAR (first run only)"
    # shellcheck disable=SC2086 # MVN_FLAGS is a list of flags
    mvn -B -ntp ${MVN_FLAGS:-} -pl engine -am package -DskipTests -Dimage.skip || die "the build failed (see above)"
  fi

  log "starting the local control plane (or reusing the running one)"
  cluster_env=$("$HACK_DIR/local-cluster.sh" up) || die "hack/local-cluster.sh up failed (see above)"
  eval "$cluster_env"
  export KUBECONFIG

  "$KUBECTL" apply -f manifests/production/metacontroller-crds-v1.yaml >/dev/null
  established compositecontrollers.metacontroller.k8s.io

  hook_port=$(pick_port)
  log "starting the hook on 127.0.0.1:$hook_port: $HOOK_CMD"
  start_hook "$hook_port"

  log "applying $EXAMPLE: CRD, controller (hook on port $hook_port), Hello default/hello"
  "$KUBECTL" apply -f "$EXAMPLE/crd.yaml" >/dev/null
  established hellos.examples.metareactor.dev
  sed "s#http://127.0.0.1:8080/#http://127.0.0.1:$hook_port/#" "$EXAMPLE/controller.yaml" | "$KUBECTL" apply -f - >/dev/null
  "$KUBECTL" apply -n default -f "$EXAMPLE/hello.yaml" >/dev/null

  metrics_port=${METRICS_PORT:-$(pick_port 9999)}
  health_port=${HEALTH_PORT:-$(pick_port 8081)}
  down="hack/local-cluster.sh down"
  [[ -n ${METAREACTOR_STATE:-} ]] && down="METAREACTOR_STATE=$METAREACTOR_STATE $down"
  cat >&2 <<EOF

  The engine starts below. In another terminal (in $REPO):

    export KUBECONFIG=$KUBECONFIG
    hack/kubectl get hellos,configmaps
    hack/kubectl patch hello hello --type=merge -p '{"spec":{"who":"you"}}'

  Metrics: http://127.0.0.1:$metrics_port/metrics   readiness: http://127.0.0.1:$health_port/readyz
  Ctrl-C stops the engine and the hook; \`$down\` stops the cluster.

EOF

  # One line when the example has done its job, amid the engine's log.
  (
    for (( i = 0; i < 120; i++ )); do
      greeting=$("$KUBECTL" get configmap hello-greeting -n default -o 'jsonpath={.data.greeting}' 2>/dev/null) || true
      if [[ -n $greeting ]]; then
        log "ConfigMap default/hello-greeting says: $greeting"
        exit 0
      fi
      sleep 0.5
    done
  ) </dev/null &
  WATCH_PID=$!

  # The launcher runs the jar with the JVM settings the engine ships with (engine/src/main/jvm/jvm.options).
  METAREACTOR_JAR="$JAR" engine/bin/metareactor --kubeconfig="$KUBECONFIG" --zap-devel \
    --metrics-address="127.0.0.1:$metrics_port" --health-probe-bind-address="127.0.0.1:$health_port" </dev/null &
  ENGINE_PID=$!
  trap stop_engine INT TERM
  # wait returns early when a trapped signal arrives; wait again until the
  # engine has really exited, and exit with its status.
  while :; do
    rc=0
    wait "$ENGINE_PID" || rc=$?
    kill -0 "$ENGINE_PID" 2>/dev/null || break
  done
  ENGINE_PID=
  log "the engine exited with status $rc"
  exit "$rc"
}
