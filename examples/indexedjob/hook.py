#!/usr/bin/env python3
"""The indexedjob sync hook: a Job whose Pods are numbered.

Usage: python3 hook.py [PORT]   (default 8080; listens on 127.0.0.1 only)

For an IndexedJob <name> with spec.completions N and spec.parallelism P it asks for Pods <name>-0 .. <name>-(N-1),
each with its index in the environment variable JOB_INDEX, and never more than P of them unfinished at a time: the
lowest indexes without a Pod start as others finish. A Pod that failed is asked for no more, so the engine deletes
it and the next sync creates it again. A Pod that succeeded stays (its logs), until the IndexedJob is deleted.
"""
import copy
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from webhook import serve  # noqa: E402  (examples/lib/webhook.py: the HTTP server every example hook shares)


def phase(pod):
    return (pod.get("status") or {}).get("phase", "Pending")


def pod(job, index):
    template = job["spec"].get("template") or {}
    metadata = copy.deepcopy(template.get("metadata") or {})
    metadata["name"] = f"{job['metadata']['name']}-{index}"
    metadata.setdefault("labels", {})["job-index"] = str(index)
    spec = copy.deepcopy(template.get("spec") or {})
    for container in spec.get("containers") or []:
        container.setdefault("env", []).append({"name": "JOB_INDEX", "value": str(index)})
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec}


def sync(job, children):
    name = job["metadata"]["name"]
    completions = int(job["spec"].get("completions", 1))
    parallelism = int(job["spec"].get("parallelism", 1))
    observed = {}
    for child in children.get("Pod.v1", {}).values():
        suffix = child["metadata"]["name"][len(name) + 1:]
        if child["metadata"]["name"].startswith(name + "-") and suffix.isdigit() and int(suffix) < completions:
            observed[int(suffix)] = child
    succeeded = sum(1 for p in observed.values() if phase(p) == "Succeeded")
    failed = sum(1 for p in observed.values() if phase(p) == "Failed")
    active = sum(1 for p in observed.values() if phase(p) not in ("Succeeded", "Failed"))
    desired = [pod(job, i) for i, p in sorted(observed.items()) if phase(p) != "Failed"]
    # A failed Pod holds its slot until the engine has deleted it: then the next sync starts its index again, the
    # lowest free one, before any higher index.
    room = parallelism - active - failed
    for index in range(completions):
        if room <= 0:
            break
        if index not in observed:
            desired.append(pod(job, index))
            room -= 1
    done = succeeded == completions
    status = {"active": active, "succeeded": succeeded, "failed": failed,
              "conditions": [{"type": "Complete", "status": "True" if done else "False"}]}
    return {"status": status, "children": desired}


if __name__ == "__main__":
    serve({"/sync": lambda request: sync(request["parent"], request.get("children", {}))})
