#!/usr/bin/env python3
"""The clusteredparent sync hook: bind an annotated ClusterRole to a namespace's default ServiceAccount.

Usage: python3 hook.py [PORT]   (default 8080; listens on 127.0.0.1 only)

  /sync  {object: a ClusterRole annotated default-service-account-binding: <namespace>, attachments}
         -> {attachments: [RoleBinding <namespace>/<role> of the role to ServiceAccount <namespace>/default]}

A cluster-scoped object may own namespaced ones: the attachment names its namespace, which the engine accepts
because the decorated object has none.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from webhook import serve  # noqa: E402  (examples/lib/webhook.py: the HTTP server every example hook shares)

RBAC = "rbac.authorization.k8s.io"


def sync(request):
    role = request["object"]["metadata"]
    namespace = role["annotations"]["default-service-account-binding"] or "default"
    binding = {
        "apiVersion": f"{RBAC}/v1",
        "kind": "RoleBinding",
        "metadata": {"name": role["name"], "namespace": namespace},
        "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": role["name"]},
        "subjects": [{"kind": "ServiceAccount", "name": "default", "namespace": namespace}],
    }
    return {"attachments": [binding]}


if __name__ == "__main__":
    serve({"/sync": sync})
