#!/usr/bin/env bash
# The engine's container image, the one definition of it: an OCI image layout (a directory any OCI tool reads:
# skopeo, podman, crane, containerd) of three layers over nothing,
#
#   1. debian  Debian 12's C runtime, bash and coreutils, users root and nonroot (65532)   (image/base.sh, cached)
#   2. java    a Java 17 runtime jlinked from Debian's openjdk-17                           (image/base.sh, cached)
#   3. engine  /app/metareactor.jar, the launcher engine/bin/metareactor as /usr/bin/metareactor and as
#              /usr/bin/metacontroller (the command upstream's manifests run), its JVM settings (jvm.options)
#
# whose entry point is the launcher, so the pod starts the engine exactly as engine/bin/metareactor starts it on a
# workstation: the same JVM flags (jvm.options) and MALLOC_ARENA_MAX. It runs as 65532:65532.
#
# Without the launcher's own class-data archive (METAREACTOR_CDS=off; the JDK's, built by jlink, is mapped): a pod's
# /tmp lives only as long as the pod, so an archive written when the engine stops would serve only restarts of its
# container, and writing it made every stop take 18 s longer on a loaded node (docs/install.md, "The image").
#
# Usage: image/build.sh JAR VERSION OUT-DIR
#   e.g. image/build.sh engine/target/metareactor.jar 0.1.0 engine/target/image   (the engine's package phase)
# then push it with skopeo:  skopeo copy oci:engine/target/image:0.1.0 docker://REGISTRY/metareactor:0.1.0
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
[[ $# -eq 3 ]] || { echo "usage: $0 JAR VERSION OUT-DIR" >&2; exit 2; }
jar=$1 version=$2 out=$3
[[ -f $jar ]] || { echo "image: $jar not found" >&2; exit 1; }

base=$("$here/base.sh" | tail -n 1)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/metareactor-image.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/layout/blobs/sha256"

# The engine layer's files get the jar's time, so the layer changes only when the jar does.
epoch=${SOURCE_DATE_EPOCH:-$(stat -c %Y "$jar")}
created=$(date -u -d "@$epoch" +%Y-%m-%dT%H:%M:%SZ)
engine="$tmp/engine"
install -D -m 0644 "$jar" "$engine/app/metareactor.jar"
install -D -m 0755 "$repo/engine/bin/metareactor" "$engine/usr/bin/metareactor"
ln -s metareactor "$engine/usr/bin/metacontroller"
install -D -m 0644 "$repo/engine/src/main/jvm/jvm.options" "$engine/etc/metareactor/jvm.options"
(cd "$engine" && tar --sort=name --mtime="@$epoch" --owner=0 --group=0 --numeric-owner --format=posix \
  --pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime -cf "$tmp/engine.tar" ./*)
gzip -n -6 < "$tmp/engine.tar" > "$tmp/engine.tar.gz"

sha() { sha256sum < "$1" | cut -d' ' -f1; }
# Puts FILE into the layout's blobs (a hard link where it can); prints "digest size".
blob() {
  local digest
  digest=$(sha "$1")
  ln -f "$1" "$tmp/layout/blobs/sha256/$digest" 2>/dev/null || cp "$1" "$tmp/layout/blobs/sha256/$digest"
  echo "sha256:$digest $(stat -c %s "$1")"
}

layers=() diff_ids=() history=()
while read -r digest size diff_id file description; do
  ln -f "$base/$file" "$tmp/layout/blobs/sha256/${digest#sha256:}" 2>/dev/null ||
    cp "$base/$file" "$tmp/layout/blobs/sha256/${digest#sha256:}"
  layers+=("$digest $size")
  diff_ids+=("\"$diff_id\"")
  history+=("{\"created\":\"$created\",\"created_by\":\"$description\"}")
done < "$base/layers"
layers+=("$(blob "$tmp/engine.tar.gz")")
diff_ids+=("\"sha256:$(sha "$tmp/engine.tar")\"")
history+=("{\"created\":\"$created\",\"created_by\":\"Metareactor $version: engine jar, launcher, jvm.options\"}")

join() { local IFS=,; echo "$*"; }
java_version=$(cat "$base/java-version")
cat > "$tmp/config.json" <<EOF
{"created":"$created","architecture":"amd64","os":"linux",
"config":{"User":"65532:65532",
"ExposedPorts":{"8081/tcp":{},"9999/tcp":{}},
"Env":["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin","LANG=C.UTF-8",
"JAVA_HOME=/usr/lib/jvm/java-17","METAREACTOR_JAR=/app/metareactor.jar",
"METAREACTOR_JVM_OPTIONS=/etc/metareactor/jvm.options","METAREACTOR_CDS=off"],
"Entrypoint":["/usr/bin/metareactor"],
"WorkingDir":"/",
"Labels":{"org.opencontainers.image.title":"metareactor","org.opencontainers.image.version":"$version",
"org.opencontainers.image.description":"Metareactor, a Metacontroller-compatible engine for lambda controllers",
"dev.metareactor.java.version":"$java_version"}},
"rootfs":{"type":"layers","diff_ids":[$(join "${diff_ids[@]}")]},
"history":[$(join "${history[@]}")]}
EOF
read -r config_digest config_size < <(blob "$tmp/config.json")

layer_json=()
for layer in "${layers[@]}"; do
  read -r digest size <<< "$layer"
  layer_json+=("{\"mediaType\":\"application/vnd.oci.image.layer.v1.tar+gzip\",\"digest\":\"$digest\",\"size\":$size}")
done
cat > "$tmp/manifest.json" <<EOF
{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json",
"config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"$config_digest","size":$config_size},
"layers":[$(join "${layer_json[@]}")]}
EOF
read -r manifest_digest manifest_size < <(blob "$tmp/manifest.json")

cat > "$tmp/layout/index.json" <<EOF
{"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json",
"manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"$manifest_digest",
"size":$manifest_size,"platform":{"architecture":"amd64","os":"linux"},
"annotations":{"org.opencontainers.image.ref.name":"$version"}}]}
EOF
echo '{"imageLayoutVersion":"1.0.0"}' > "$tmp/layout/oci-layout"

rm -rf "$out"
mkdir -p "$(dirname "$out")"
mv -T "$tmp/layout" "$out"
total=0
for layer in "${layers[@]}"; do total=$(( total + ${layer#* } )); done
printf 'image: %s:%s (%s), Java %s, %d layers, %d MB compressed\n' "$out" "$version" "$manifest_digest" \
  "$java_version" "${#layers[@]}" $(( total / 1000000 )) >&2
