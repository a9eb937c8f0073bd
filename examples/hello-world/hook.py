#!/usr/bin/env python3
"""The hello-world sync hook: one ConfigMap <parent>-greeting per Hello.

Usage: python3 hook.py [PORT]   (default 8080; listens on 127.0.0.1 only)

The engine POSTs {controller, parent, children, related, finalizing} to /sync and expects the desired state back:
{status, children}. Returning the full child every time is all it takes: the engine creates, updates (InPlace) or
deletes children to match, and the owner references it sets make the garbage collector delete the ConfigMap
together with its Hello.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from webhook import serve  # noqa: E402  (examples/lib/webhook.py: the HTTP server every example hook shares)


def sync(parent, children):
    who = parent.get("spec", {}).get("who", "World")
    greeting = f"Hello, {who}!"
    configmap = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": parent["metadata"]["name"] + "-greeting"},
        "data": {"greeting": greeting},
    }
    # Status describes what the engine showed us (observed state), not what we ask for.
    status = {"greeting": greeting, "observedChildren": len(children.get("ConfigMap.v1", {}))}
    return {"status": status, "children": [configmap]}


if __name__ == "__main__":
    serve({"/sync": lambda request: sync(request["parent"], request.get("children", {}))})
