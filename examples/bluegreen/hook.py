#!/usr/bin/env python3
"""The bluegreen sync hook: blue-green deployments of a pod template behind one Service.

Usage: python3 hook.py [PORT]   (default 8080; listens on 127.0.0.1 only)

For a BlueGreenDeployment <name> it asks for two ReplicaSets, <name>-blue and <name>-green (selector: the parent's
plus color), and the Service of spec.service with a selector for the active color. The active color is remembered
in status.activeColor (blue at first). Each ReplicaSet carries the hash of the template it runs, so the hook can tell:

- the active ReplicaSet runs the current template: it has all replicas, the idle one none;
- it does not (the template changed): the idle ReplicaSet gets the new template and all replicas while the active
  one keeps serving; once the idle one reports every replica ready for its latest generation, the Service selector
  and status.activeColor switch to it, and the old color scales to zero on the next sync.
"""
import copy
import hashlib
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from webhook import serve  # noqa: E402  (examples/lib/webhook.py: the HTTP server every example hook shares)

COLORS = ("blue", "green")
HASH = "examples.metareactor.dev/template-hash"


def template_hash(template):
    canonical = json.dumps(template, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]


def all_ready(rs, replicas):
    """The ReplicaSet has seen its latest spec and all its replicas are ready."""
    status = rs.get("status") or {}
    return (status.get("observedGeneration", 0) >= rs["metadata"].get("generation", 0)
            and status.get("readyReplicas", 0) >= replicas)


def replica_set(bgd, color, template, template_id, replicas):
    name = bgd["metadata"]["name"]
    spec = bgd["spec"]
    labels = dict((spec.get("selector") or {}).get("matchLabels") or {}, color=color)
    pod_template = copy.deepcopy(template)
    pod_template.setdefault("metadata", {}).setdefault("labels", {}).update(labels)
    return {"apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": {"name": f"{name}-{color}", "annotations": {HASH: template_id}},
            "spec": {"replicas": replicas, "selector": {"matchLabels": labels}, "template": pod_template}}


def service(bgd, color):
    spec = bgd["spec"]
    svc = copy.deepcopy(spec.get("service") or {})
    metadata = svc.setdefault("metadata", {})
    metadata.setdefault("name", bgd["metadata"]["name"])
    svc_spec = svc.setdefault("spec", {})
    svc_spec["selector"] = dict((spec.get("selector") or {}).get("matchLabels") or {}, color=color)
    return dict(svc, apiVersion="v1", kind="Service")


def sync(bgd, children):
    name = bgd["metadata"]["name"]
    spec = bgd["spec"]
    replicas = int(spec.get("replicas", 1))
    template = spec.get("template") or {}
    current = template_hash(template)
    observed = {rs["metadata"]["name"]: rs for rs in children.get("ReplicaSet.apps/v1", {}).values()}
    active = (bgd.get("status") or {}).get("activeColor", "blue")
    idle = COLORS[1 - COLORS.index(active)]
    active_rs, idle_rs = observed.get(f"{name}-{active}"), observed.get(f"{name}-{idle}")

    def runs(rs):
        return rs is not None and rs["metadata"].get("annotations", {}).get(HASH) == current

    def keep(rs, color, count):
        """The ReplicaSet as it is (its own template), with count replicas."""
        if rs is None:
            return replica_set(bgd, color, template, current, count)
        kept_template = copy.deepcopy(rs["spec"]["template"])
        return replica_set(bgd, color, kept_template, rs["metadata"]["annotations"][HASH], count)

    if runs(active_rs) or active_rs is None:
        # Steady: the active color runs the current template (or nothing exists yet).
        serving = active
        desired = [replica_set(bgd, active, template, current, replicas), keep(idle_rs, idle, 0)]
    elif runs(idle_rs) and all_ready(idle_rs, replicas):
        # The new template is ready on the idle color: switch the traffic to it.
        serving = idle
        desired = [keep(active_rs, active, replicas), replica_set(bgd, idle, template, current, replicas)]
    else:
        # A new template: bring it up on the idle color while the active one serves.
        serving = active
        desired = [keep(active_rs, active, replicas), replica_set(bgd, idle, template, current, replicas)]
    desired.append(service(bgd, serving))
    serving_rs = observed.get(f"{name}-{serving}")
    ready = ((serving_rs or {}).get("status") or {}).get("readyReplicas", 0)
    return {"status": {"activeColor": serving, "readyReplicas": ready}, "children": desired}


if __name__ == "__main__":
    serve({"/sync": lambda request: sync(request["parent"], request.get("children", {}))})
