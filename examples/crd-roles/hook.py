#!/usr/bin/env python3
"""The crd-roles sync hook: a ClusterRole that reads the resource of an annotated CustomResourceDefinition.

Usage: python3 hook.py [PORT]   (default 8080; listens on 127.0.0.1 only)

  /sync  {object: a CRD, attachments}  -> {attachments: [ClusterRole <plural>.<group>-reader]}

Aggregated to the built-in "view" role by its label, so whoever may view a namespace may read the new resource there.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from webhook import serve  # noqa: E402  (examples/lib/webhook.py: the HTTP server every example hook shares)


def sync(request):
    crd = request["object"]
    group = crd["spec"]["group"]
    plural = crd["spec"]["names"]["plural"]
    role = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": f"{plural}.{group}-reader",
                     "labels": {"rbac.authorization.k8s.io/aggregate-to-view": "true"}},
        "rules": [{"apiGroups": [group], "resources": [plural], "verbs": ["get", "list", "watch"]}],
    }
    return {"attachments": [role]}


if __name__ == "__main__":
    serve({"/sync": sync})
