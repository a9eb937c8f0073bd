#!/usr/bin/env python3
"""The catset sync hook: a StatefulSet's behaviour as a lambda controller.

Usage: python3 hook.py [PORT]   (default 8080; listens on 127.0.0.1 only)

For a CatSet <name> with spec.replicas N it asks for Pods <name>-0 .. <name>-(N-1), each with one
PersistentVolumeClaim <claim>-<name>-<ordinal> per spec.volumeClaimTemplates entry:

- ordered start: a missing Pod is asked for only when every Pod below it exists and is Ready, and one at a time;
- ordered scale-down: Pods above N go one at a time, the highest first; their PVCs stay (as a StatefulSet's do);
- rolling update: the hook only describes Pods from the template it is shown. The engine calls it once per
  ControllerRevision (with the CatSet as that revision recorded spec.template) and moves one Pod at a time to the
  newest template, in the order Pods are listed here (highest ordinal first, as a StatefulSet rolls), each only
  after the one before passed the Ready check. That is all the controller's spec says; no rollout logic lives here.
"""
import copy
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from webhook import serve  # noqa: E402  (examples/lib/webhook.py: the HTTP server every example hook shares)


def is_ready(pod):
    conditions = (pod.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


def ordinal_of(obj, prefix):
    """The ordinal of an object named <prefix><ordinal>, else None."""
    name = obj["metadata"]["name"]
    suffix = name[len(prefix):]
    return int(suffix) if name.startswith(prefix) and suffix.isdigit() else None


def by_ordinal(objects, prefix):
    found = {}
    for obj in objects.values():
        ordinal = ordinal_of(obj, prefix)
        if ordinal is not None:
            found[ordinal] = obj
    return found


def wanted_ordinals(name, replicas, pods):
    """The Pods to ask for: existing ones below replicas, the next to start, and all but the highest beyond."""
    existing = by_ordinal(pods, name + "-")
    wanted = []
    may_start = True
    for i in range(replicas):
        pod = existing.get(i)
        if pod is not None:
            wanted.append(i)
            may_start = may_start and is_ready(pod)
        elif may_start:
            wanted.append(i)      # the next Pod to start; the ones above wait for it to be Ready
            may_start = False
    beyond = sorted(i for i in existing if i >= replicas)
    return wanted + beyond[:-1]   # scale down: the highest goes first


def pod(catset, ordinal):
    name = catset["metadata"]["name"]
    spec = catset["spec"]
    template = spec.get("template") or {}
    metadata = copy.deepcopy(template.get("metadata") or {})
    metadata["name"] = f"{name}-{ordinal}"
    pod_spec = copy.deepcopy(template.get("spec") or {})
    pod_spec["hostname"] = metadata["name"]
    if spec.get("serviceName"):
        pod_spec["subdomain"] = spec["serviceName"]
    volumes = pod_spec.setdefault("volumes", [])
    for claim in spec.get("volumeClaimTemplates") or []:
        claim_name = claim["metadata"]["name"]
        volumes.append({"name": claim_name,
                        "persistentVolumeClaim": {"claimName": f"{claim_name}-{name}-{ordinal}"}})
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": pod_spec}


def claims(catset, ordinal):
    name = catset["metadata"]["name"]
    labels = ((catset["spec"].get("template") or {}).get("metadata") or {}).get("labels") or {}
    for claim in catset["spec"].get("volumeClaimTemplates") or []:
        yield {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
               "metadata": {"name": f"{claim['metadata']['name']}-{name}-{ordinal}", "labels": dict(labels)},
               "spec": copy.deepcopy(claim.get("spec") or {})}


def sync(catset, children):
    name = catset["metadata"]["name"]
    replicas = int(catset["spec"].get("replicas", 1))
    pods = children.get("Pod.v1", {})
    observed_claims = children.get("PersistentVolumeClaim.v1", {})
    wanted = wanted_ordinals(name, replicas, pods)
    # Every PVC ever made stays: those of wanted Pods, and those of Pods scaled away.
    claim_ordinals = set(wanted)
    for claim in catset["spec"].get("volumeClaimTemplates") or []:
        claim_ordinals |= set(by_ordinal(observed_claims, f"{claim['metadata']['name']}-{name}-"))
    desired = [pod(catset, i) for i in sorted(wanted, reverse=True)]
    desired += [c for i in sorted(claim_ordinals) for c in claims(catset, i)]
    status = {"replicas": len(pods), "readyReplicas": sum(1 for p in pods.values() if is_ready(p))}
    return {"status": status, "children": desired}


if __name__ == "__main__":
    serve({"/sync": lambda request: sync(request["parent"], request.get("children", {}))})
