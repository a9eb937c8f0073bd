#!/usr/bin/env python3
"""The namespace-list hooks (v2): a ConfigMap listing the namespaces a NamespaceList's selector picks.

Usage: python3 hook.py [PORT]   (default 8080; listens on 127.0.0.1 only)

  /customize  {parent}  -> {relatedResources: the Namespaces matching spec.namespaceSelector}
  /sync       {parent, children, related}  -> {children: [ConfigMap <name>-list], status: {count}}

The engine calls both as version v2: related objects are keyed "namespace/name", a Namespace by its name alone.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from webhook import serve  # noqa: E402  (examples/lib/webhook.py: the HTTP server every example hook shares)


def customize(request):
    return {"relatedResources": [{"apiVersion": "v1", "resource": "namespaces",
                                  "labelSelector": request["parent"]["spec"]["namespaceSelector"]}]}


def sync(request):
    parent = request["parent"]
    names = sorted(ns["metadata"]["name"] for ns in request.get("related", {}).get("Namespace.v1", {}).values())
    listing = {"apiVersion": "v1", "kind": "ConfigMap",
               "metadata": {"name": parent["metadata"]["name"] + "-list"},
               "data": {"namespaces": "\n".join(names)}}
    return {"status": {"count": len(names)}, "children": [listing]}


if __name__ == "__main__":
    serve({"/customize": customize, "/sync": sync})
