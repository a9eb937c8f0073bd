#!/usr/bin/env bash
# The end-to-end load harness, in one command (see benchmarks/README.md):
#
#   benchmarks/load/run.sh --engine upstream=../shared/upstream/metacontroller \
#                          --engine metareactor=engine/bin/metareactor --parents 1000 --runs 3
#
# Builds the engine and the harness when their jars are missing (pass --rebuild to force it), starts or reuses the
# local control plane (hack/local-cluster.sh), builds the Go hook and API clients into the cache outside the
# repository, and writes results.json, summary.md and chart.png under benchmarks/load/results/<UTC time>/.
set -euo pipefail
cd "$(dirname "$0")/../.."
if [[ ${1:-} == --rebuild ]] || [[ ! -f engine/target/metareactor.jar ]] || [[ ! -f benchmarks/load/target/load-harness.jar ]]; then
  [[ ${1:-} == --rebuild ]] && shift
  mvn -B -ntp -q -pl engine,benchmarks/load -am package -DskipTests -Dimage.skip >&2
fi
# The driver shares the machine with the engines it measures: keep its own JIT and GC small.
exec java -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Xmx512m -jar benchmarks/load/target/load-harness.jar "$@"
