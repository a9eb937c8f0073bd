#!/usr/bin/env python3
"""The configmap-digest hooks: for every ConfigMap a ConfigMapDigest selects, a ConfigMap recording a SHA-256 of
its content and its keys (what a Deployment's pod template annotation can carry to roll on a config change).

Usage: python3 hook.py [PORT]   (default 8080; listens on 127.0.0.1 only)

The engine calls a hook per selected ConfigMap (the "input") of each ConfigMapDigest (the "parent"), with that
ConfigMap's digest (its "outputs", grouped as {"ConfigMap.v1": {name: object}}):

  /map        the parent selects the ConfigMap: {controller, parent, mapKey, input, outputs}
              -> {outputs: [its digest]}
  /tombstone  the ConfigMap is gone or no longer selected: {controller, parent, mapKey, outputs}
              -> {outputs: the digests to keep as they are}: all of them while the parent says retainRemoved,
              none otherwise (the engine deletes those)

The answers depend on the request only, so a repeated or retried call asks for the same digest.
"""
import hashlib
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from webhook import serve  # noqa: E402  (examples/lib/webhook.py: the HTTP server every example hook shares)

MAX_NAME = 253


def content_digest(configmap):
    """SHA-256 of the ConfigMap's data and binaryData, as JSON with sorted keys and no spaces: the same content
    always gives the same digest, whatever order the API server lists the keys in."""
    content = {"data": configmap.get("data") or {}, "binaryData": configmap.get("binaryData") or {}}
    return hashlib.sha256(json.dumps(content, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def digest_name(parent, source, map_key):
    name = f"{parent}-{source}"
    if len(name) > MAX_NAME:
        # Too long for a name: cut, and keep it unique per input with the start of its UID (the mapKey).
        name = name[:MAX_NAME - 9].rstrip(".-") + "-" + map_key[:8]
    return name


def map_configmap(request):
    source = request["input"]
    keys = sorted(list((source.get("data") or {}).keys()) + list((source.get("binaryData") or {}).keys()))
    return {"outputs": [{
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": digest_name(request["parent"]["metadata"]["name"], source["metadata"]["name"],
                                         request["mapKey"])},
        "data": {
            "source": source["metadata"]["name"],
            "sha256": content_digest(source),
            "keys": ",".join(keys),
        },
    }]}


def tombstone(request):
    if not request["parent"].get("spec", {}).get("retainRemoved", False):
        return {"outputs": []}
    # Offered again at every resync: once retainRemoved is false, the next call lets them go.
    return {"outputs": list(request.get("outputs", {}).get("ConfigMap.v1", {}).values())}


if __name__ == "__main__":
    serve({"/map": map_configmap, "/tombstone": tombstone})
