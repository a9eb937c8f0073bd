#!/usr/bin/env python3
"""The daemonjob sync hook: a job that runs once on every node, as a DaemonSet that goes when its work is done.

Usage: python3 hook.py [PORT]   (default 8080; listens on 127.0.0.1 only)

A DaemonJob <name> asks for DaemonSet <name>-dj, whose Pods run the DaemonJob's template: its init containers do the
work, and a pause container added here keeps the Pod (Ready) once they have. When the DaemonSet's status says, for
its latest generation, that every Pod it scheduled is ready, the work is done everywhere: the DaemonJob is
Completed, and once its status shows that (the status remembers) the hook asks for no DaemonSet, which the engine
deletes.
"""
import copy
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from webhook import serve  # noqa: E402  (examples/lib/webhook.py: the HTTP server every example hook shares)

PAUSE = {"name": "pause", "image": "registry.k8s.io/pause:3.9"}


def completed(job):
    conditions = (job.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Completed" and c.get("status") == "True" for c in conditions)


def daemonset(job):
    name = job["metadata"]["name"]
    template = copy.deepcopy(job["spec"].get("template") or {})
    labels = template.setdefault("metadata", {}).setdefault("labels", {})
    labels["daemonjob"] = name
    template.setdefault("spec", {})["containers"] = [PAUSE]
    return {"apiVersion": "apps/v1", "kind": "DaemonSet",
            "metadata": {"name": f"{name}-dj"},
            "spec": {"selector": {"matchLabels": {"daemonjob": name}}, "template": template}}


def all_done(ds):
    """Every Pod the DaemonSet's latest generation scheduled is ready: its init containers (the work) have run."""
    if ds is None:
        return False
    status = ds.get("status") or {}
    desired = status.get("desiredNumberScheduled", 0)
    return (status.get("observedGeneration", 0) >= ds["metadata"].get("generation", 1)
            and desired > 0 and status.get("numberReady", 0) == desired)


def sync(job, children):
    name = job["metadata"]["name"]
    ds = children.get("DaemonSet.apps/v1", {}).get(f"{name}-dj")
    observed = (ds or {}).get("status") or {}
    # The DaemonSet goes only once the DaemonJob's own status shows Completed, not in the sync that first sees the work
    # done: a sync that saw the DaemonSet gone before it saw that status (the parent it is shown can be older than the
    # last status written) would take the job for not started and create the DaemonSet again.
    recorded = completed(job)
    done = recorded or all_done(ds)
    status = {"desiredNumberScheduled": observed.get("desiredNumberScheduled", 0),
              "numberDone": observed.get("numberReady", 0),
              "conditions": [{"type": "Completed", "status": "True" if done else "False"}]}
    if ds is None and recorded:
        # Keep the last counts the DaemonSet showed once it is gone.
        status.update({k: v for k, v in (job.get("status") or {}).items()
                       if k in ("desiredNumberScheduled", "numberDone")})
    return {"status": status, "children": [] if recorded else [daemonset(job)]}


if __name__ == "__main__":
    serve({"/sync": lambda request: sync(request["parent"], request.get("children", {}))})
