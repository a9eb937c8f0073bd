#!/usr/bin/env bash
# End-to-end test of the service-per-pod example against a running cluster and
# engine: starts the hooks, installs the two DecoratorControllers, creates
# StatefulSet nginx and its Pods, checks a Service per Pod and the pod-name
# label, opts out (Services gone, finalizer removed) and in again, deletes the
# StatefulSet while a foreign finalizer holds it (Services gone, only the
# foreign finalizer left), and removes everything it created on the way out
# (also on failure or Ctrl-C).
#
# Nothing runs StatefulSets here (the local cluster has no StatefulSet
# controller and no kubelet): the test creates the Pods as that controller
# would.
#
# Usage: examples/service-per-pod/test.sh
#
# Environment:
#   KUBECONFIG  the cluster (the engine must be running against it, hosting
#               every DecoratorController, i.e. without a target label selector)
#   KUBECTL     kubectl to use (default: hack/kubectl of this repository)
#   NAMESPACE   where the StatefulSet and its Pods go (default: default)
#   HOOK_CMD    the hook command; the port is appended as its last argument
#               (default: python3 <this dir>/hook.py)
#   HOOK_PORT   the hook's port (default: a free one)
#   TIMEOUT     seconds to wait for each step (default 60)
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
CONTROLLERS=(service-per-pod pod-name-label)
SET=nginx                      # nginx.yaml: 3 replicas
PODS=(nginx-0 nginx-1 nginx-2)
FINALIZER=metacontroller.io/decoratorcontroller-service-per-pod
HOLD=examples.metareactor.dev/hold

EXAMPLE=service-per-pod
# shellcheck source=../lib/test-lib.sh
source "$REPO/examples/lib/test-lib.sh"

CREATED_CONTROLLERS=false
CREATED_SET=false
OK=false

cleanup() {
  local rc=$? pod
  set +e
  if ! $OK; then
    report_failure "$rc"
    log "---- StatefulSet $NAMESPACE/$SET ----"; kn get statefulset "$SET" -o yaml >&2 2>/dev/null
    log "---- Pods and Services ----"; kn get pods,services --show-labels >&2 2>/dev/null
    show_events
  fi
  log "cleaning up"
  if $CREATED_CONTROLLERS; then
    for controller in "${CONTROLLERS[@]}"; do k delete decoratorcontroller "$controller" --ignore-not-found >/dev/null; done
  fi
  if $CREATED_SET; then
    # With the controllers gone nothing would remove their finalizer: take both off, then delete.
    kn patch statefulset "$SET" --type=merge -p '{"metadata":{"finalizers":null}}' >/dev/null 2>&1
    kn delete statefulset "$SET" --ignore-not-found --wait=false >/dev/null 2>&1
    for pod in "${PODS[@]}"; do kn delete pod "$pod" --ignore-not-found --wait=false >/dev/null 2>&1; done
    kn delete services -l app=service-per-pod --ignore-not-found --wait=false >/dev/null 2>&1
  fi
  stop_hook
  rm -f "$HOOK_LOG"
  exit "$rc"
}

# Plays the StatefulSet controller: Pod $1 from the StatefulSet's template.
create_pod() {
  kn create -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata:
  name: $1
  labels: {app: nginx}
  annotations: {pod-name-label: "true"}
spec:
  containers: [{name: nginx, image: nginx:1.25}]
YAML
}

# Service $1 exists and selects pod-name=$1, port 80 to 8080.
service_selects() {
  [[ $(jsonpath service "$1" '{.spec.selector.pod-name}|{.spec.ports[0].port}:{.spec.ports[0].targetPort}') \
    == "$1|80:8080" ]]
}

pod_labelled() { [[ $(jsonpath pod "$1" '{.metadata.labels.pod-name}') == "$1" ]]; }

finalizers_are() { [[ $(jsonpath statefulset "$SET" '{.metadata.finalizers[*]}') == "$1" ]]; }

has_finalizer() { [[ " $(jsonpath statefulset "$SET" '{.metadata.finalizers[*]}') " == *" $FINALIZER "* ]]; }

no_finalizer() {
  local finalizers
  finalizers=$(kn get statefulset "$SET" -o 'jsonpath={.metadata.finalizers[*]}') || return 1
  [[ " $finalizers " != *" $FINALIZER "* ]]
}

services_gone() {
  local pod
  for pod in "${PODS[@]}"; do object_gone service "$pod" || return 1; done
}

annotate() { kn patch statefulset "$SET" --type=merge -p "{\"metadata\":{\"annotations\":{\"service-per-pod-label\":$1}}}" >/dev/null; }

{
  trap cleanup EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM

  for controller in "${CONTROLLERS[@]}"; do require_cluster_without decoratorcontroller "$controller"; done
  ! kn get statefulset "$SET" >/dev/null 2>&1 || fail "StatefulSet $NAMESPACE/$SET already exists; use another NAMESPACE"
  start_hook

  log "installing the controllers"
  CREATED_CONTROLLERS=true
  apply_controller "$HERE/controller.yaml"

  log "creating StatefulSet $NAMESPACE/$SET and its Pods"
  CREATED_SET=true
  kn apply -f "$HERE/nginx.yaml" >/dev/null
  for pod in "${PODS[@]}"; do create_pod "$pod"; done
  for pod in "${PODS[@]}"; do
    wait_for "$TIMEOUT" "Service $pod selecting pod-name=$pod (is the engine running?)" service_selects "$pod"
    wait_for "$TIMEOUT" "Pod $pod labelled pod-name=$pod" pod_labelled "$pod"
  done
  wait_for "$TIMEOUT" "the finalizer $FINALIZER on StatefulSet $SET" has_finalizer
  preview 0 "decoratorcontroller/service-per-pod"

  log "opting out: removing the annotation service-per-pod-label"
  annotate null
  wait_for "$TIMEOUT" "the Services to be deleted" services_gone
  wait_for "$TIMEOUT" "the finalizer $FINALIZER to be removed" no_finalizer

  log "opting in again"
  annotate '"pod-name"'
  wait_for "$TIMEOUT" "Service nginx-2 back" service_selects nginx-2
  wait_for "$TIMEOUT" "the finalizer $FINALIZER back" has_finalizer

  log "deleting StatefulSet $SET while a foreign finalizer holds it"
  kn patch statefulset "$SET" --type=json -p "[{\"op\":\"add\",\"path\":\"/metadata/finalizers/-\",\"value\":\"$HOLD\"}]" >/dev/null
  kn delete statefulset "$SET" --wait=false >/dev/null
  wait_for "$TIMEOUT" "the Services to be deleted by the finalize hook" services_gone
  wait_for "$TIMEOUT" "only the finalizer $HOLD left" finalizers_are "$HOLD"

  OK=true
  log "PASSED in ${SECONDS}s"
  exit 0
}
