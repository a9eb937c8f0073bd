#!/usr/bin/env python3
"""The service-per-pod hooks: a Service for every Pod of an annotated StatefulSet, and a label naming each Pod.

Usage: python3 hook.py [PORT]   (default 8080; listens on 127.0.0.1 only)

  /sync-service-per-pod      {object: a StatefulSet, attachments}  -> {attachments: a Service per replica}
  /finalize-service-per-pod  the same request, while the StatefulSet goes or opts out
                             -> {attachments: [], finalized: once no Service is left}
  /sync-pod-name-label       {object: a Pod}  -> {labels: {pod-name: <the Pod's name>}}

The StatefulSet says which label its Pods carry their name in (annotation service-per-pod-label) and which ports
to expose (service-per-pod-ports: "port:targetPort[,port:targetPort...]").
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from webhook import serve  # noqa: E402  (examples/lib/webhook.py: the HTTP server every example hook shares)


def ports(annotation):
    """'80:8080,443:8443' -> [{port: 80, targetPort: 8080}, ...]"""
    result = []
    for pair in annotation.split(","):
        port, _, target = pair.strip().partition(":")
        result.append({"name": f"port-{port}", "port": int(port), "targetPort": int(target or port)})
    return result


def services(statefulset):
    metadata = statefulset["metadata"]
    annotations = metadata.get("annotations") or {}
    label = annotations["service-per-pod-label"]
    exposed = ports(annotations["service-per-pod-ports"])
    name = metadata["name"]
    for ordinal in range(int(statefulset["spec"].get("replicas", 1))):
        pod = f"{name}-{ordinal}"
        yield {"apiVersion": "v1", "kind": "Service",
               "metadata": {"name": pod, "labels": {"app": "service-per-pod"}},
               "spec": {"selector": {label: pod}, "ports": exposed}}


def sync_services(request):
    return {"attachments": list(services(request["object"]))}


def finalize_services(request):
    # Ask for no Services; say "finalized" only once none is observed, so the engine keeps calling until then.
    left = request.get("attachments", {}).get("Service.v1", {})
    return {"attachments": [], "finalized": not left}


def sync_pod_name_label(request):
    return {"labels": {"pod-name": request["object"]["metadata"]["name"]}}


if __name__ == "__main__":
    serve({"/sync-service-per-pod": sync_services,
           "/finalize-service-per-pod": finalize_services,
           "/sync-pod-name-label": sync_pod_name_label})
