#!/usr/bin/env python3
"""The configmap-propagation hooks: one ConfigMap copied to the namespaces a ConfigMapPropagation lists.

Usage: python3 hook.py [PORT]   (default 8080; listens on 127.0.0.1 only)

  /customize  {parent}  -> {relatedResources: the source ConfigMap, by namespace and name}
  /sync       {parent, children, related}  -> {children: a copy per target namespace, status}

The parent is cluster-scoped, so the engine keys related objects and children by "namespace/name".
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from webhook import serve  # noqa: E402  (examples/lib/webhook.py: the HTTP server every example hook shares)


def customize(request):
    spec = request["parent"]["spec"]
    return {"relatedResources": [{"apiVersion": "v1", "resource": "configmaps",
                                  "namespace": spec["sourceNamespace"], "names": [spec["sourceName"]]}]}


def sync(request):
    parent = request["parent"]
    spec = parent["spec"]
    source = request.get("related", {}).get("ConfigMap.v1", {}).get(f"{spec['sourceNamespace']}/{spec['sourceName']}")
    targets = [ns for ns in spec.get("targetNamespaces") or [] if ns != spec["sourceNamespace"]]
    observed = request.get("children", {}).get("ConfigMap.v1", {})
    status = {"expectedCopies": len(targets),
              "actualCopies": sum(1 for key in observed if key.split("/")[0] in targets),
              "sourceFound": source is not None}
    if source is None:
        # Nothing to copy (yet): ask for no copies rather than empty ones.
        return {"status": status, "children": []}
    copies = [{"apiVersion": "v1", "kind": "ConfigMap",
               "metadata": {"name": spec["sourceName"], "namespace": ns},
               "data": source.get("data") or {}}
              for ns in targets]
    return {"status": status, "children": copies}


if __name__ == "__main__":
    serve({"/customize": customize, "/sync": sync})
