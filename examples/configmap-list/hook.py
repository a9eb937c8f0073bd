#!/usr/bin/env python3
"""The configmap-list hooks (v2): a ConfigMap listing the ConfigMaps of another namespace that a selector picks.

Usage: python3 hook.py [PORT]   (default 8080; listens on 127.0.0.1 only)

  /customize  {parent}  -> {relatedResources: the ConfigMaps of spec.sourceNamespace matching spec.selector}
  /sync       {parent, children, related}  -> {children: [ConfigMap <name>-list], status: {count}}

The engine calls both as version v2: related objects are keyed "namespace/name", which is what the list shows.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from webhook import serve  # noqa: E402  (examples/lib/webhook.py: the HTTP server every example hook shares)


def customize(request):
    spec = request["parent"]["spec"]
    return {"relatedResources": [{"apiVersion": "v1", "resource": "configmaps",
                                  "namespace": spec["sourceNamespace"], "labelSelector": spec["selector"]}]}


def sync(request):
    parent = request["parent"]
    keys = sorted(request.get("related", {}).get("ConfigMap.v1", {}))
    listing = {"apiVersion": "v1", "kind": "ConfigMap",
               "metadata": {"name": parent["metadata"]["name"] + "-list"},
               "data": {"configmaps": "\n".join(keys)}}
    return {"status": {"count": len(keys)}, "children": [listing]}


if __name__ == "__main__":
    serve({"/customize": customize, "/sync": sync})
