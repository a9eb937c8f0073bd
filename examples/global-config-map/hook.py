#!/usr/bin/env python3
"""The global-config-map hooks: one ConfigMap copied to every namespace of the cluster.

Usage: python3 hook.py [PORT]   (default 8080; listens on 127.0.0.1 only)

  /customize  {parent}  -> {relatedResources: the source ConfigMap, and every Namespace}
  /sync       {parent, children, related}  -> {children: a copy in each namespace but the source's, status}

The parent is cluster-scoped: related objects and children are keyed "namespace/name" (a Namespace by its name).
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from webhook import serve  # noqa: E402  (examples/lib/webhook.py: the HTTP server every example hook shares)


def customize(request):
    spec = request["parent"]["spec"]
    return {"relatedResources": [
        {"apiVersion": "v1", "resource": "configmaps", "namespace": spec["sourceNamespace"],
         "names": [spec["sourceName"]]},
        {"apiVersion": "v1", "resource": "namespaces"},
    ]}


def sync(request):
    spec = request["parent"]["spec"]
    related = request.get("related", {})
    source = related.get("ConfigMap.v1", {}).get(f"{spec['sourceNamespace']}/{spec['sourceName']}")
    # A namespace being deleted takes no new objects: asking for one there would fail the sync until it is gone.
    targets = sorted(ns["metadata"]["name"] for ns in related.get("Namespace.v1", {}).values()
                     if (ns.get("status") or {}).get("phase") != "Terminating"
                     and ns["metadata"]["name"] != spec["sourceNamespace"])
    status = {"copies": len(request.get("children", {}).get("ConfigMap.v1", {})), "namespaces": len(targets),
              "sourceFound": source is not None}
    if source is None:
        return {"status": status, "children": []}
    copies = [{"apiVersion": "v1", "kind": "ConfigMap",
               "metadata": {"name": spec["sourceName"], "namespace": ns},
               "data": source.get("data") or {}}
              for ns in targets]
    return {"status": status, "children": copies}


if __name__ == "__main__":
    serve({"/customize": customize, "/sync": sync})
