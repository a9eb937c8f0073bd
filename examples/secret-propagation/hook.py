#!/usr/bin/env python3
"""The secret-propagation hooks: one Secret copied to every namespace a label selector picks.

Usage: python3 hook.py [PORT]   (default 8080; listens on 127.0.0.1 only)

  /customize  {parent}  -> {relatedResources: the source Secret, and the Namespaces the parent's selector picks}
  /sync       {parent, children, related}  -> {children: a copy in each picked namespace, status}

The parent is cluster-scoped: related objects and children are keyed "namespace/name" (a Namespace, being
cluster-scoped itself, by its name).
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from webhook import serve  # noqa: E402  (examples/lib/webhook.py: the HTTP server every example hook shares)


def customize(request):
    spec = request["parent"]["spec"]
    return {"relatedResources": [
        {"apiVersion": "v1", "resource": "secrets", "namespace": spec["sourceNamespace"], "names": [spec["sourceName"]]},
        {"apiVersion": "v1", "resource": "namespaces", "labelSelector": spec["namespaceSelector"]},
    ]}


def sync(request):
    spec = request["parent"]["spec"]
    related = request.get("related", {})
    source = related.get("Secret.v1", {}).get(f"{spec['sourceNamespace']}/{spec['sourceName']}")
    # A namespace being deleted takes no new objects.
    targets = sorted(ns["metadata"]["name"] for ns in related.get("Namespace.v1", {}).values()
                     if (ns.get("status") or {}).get("phase") != "Terminating"
                     and ns["metadata"]["name"] != spec["sourceNamespace"])
    status = {"copies": len(request.get("children", {}).get("Secret.v1", {})), "namespaces": targets,
              "sourceFound": source is not None}
    if source is None:
        return {"status": status, "children": []}
    copies = [{"apiVersion": "v1", "kind": "Secret",
               "metadata": {"name": spec["sourceName"], "namespace": ns},
               "type": source.get("type", "Opaque"),
               "data": source.get("data") or {}}
              for ns in targets]
    return {"status": status, "children": copies}


if __name__ == "__main__":
    serve({"/customize": customize, "/sync": sync})
