#!/usr/bin/env python3
"""The snapshot-schedule hooks: a Snapshot of every PVC a SnapshotSchedule selects, one per interval, each kept
for the schedule's TTL.

Usage: python3 hook.py [PORT]   (default 8080; listens on 127.0.0.1 only)

The engine calls a hook per PVC (the "input") of each SnapshotSchedule (the "parent"), with that PVC's Snapshots
(its "outputs", grouped as {"Snapshot.<apiVersion>": {name: object}}):

  /map        the schedule selects the PVC: {controller, parent, mapKey, input, outputs}
              -> {outputs: the Snapshots it should have, resyncAfterSeconds: when to ask again}
  /tombstone  the PVC is gone or no longer selected: {controller, parent, mapKey, outputs}
              -> {outputs: the Snapshots to keep as they are}; the engine deletes the others

The answers depend on the request and the clock only. A new Snapshot is named after, and dated at, the start of
the interval it is taken in: calling again within that interval asks for the same Snapshot, so a repeated or
retried call never takes a second one.
"""
import calendar
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from webhook import serve  # noqa: E402  (examples/lib/webhook.py: the HTTP server every example hook shares)

API_VERSION = "snapshots.examples.metareactor.dev/v1"
KIND = "Snapshot"
# How the engine groups outputs in requests: "<Kind>.<apiVersion>".
GROUP = f"{KIND}.{API_VERSION}"
RFC3339 = "%Y-%m-%dT%H:%M:%SZ"
# A Snapshot is named after its schedule, its PVC and the interval it was taken in.
STAMP = "%Y%m%d-%H%M%S"
MAX_NAME = 253


def taken_at(snapshot):
    """When the Snapshot was taken, in Unix seconds; None when it does not say (never ours: dropped)."""
    try:
        return calendar.timegm(time.strptime(snapshot["spec"]["takenAt"], RFC3339))
    except (KeyError, TypeError, ValueError):
        return None


def dated(outputs):
    """The Snapshots of the request, as (taken at, snapshot), oldest first."""
    snapshots = ((taken_at(s), s) for s in outputs.get(GROUP, {}).values())
    return sorted(((t, s) for t, s in snapshots if t is not None), key=lambda pair: pair[0])


def snapshot_name(schedule, pvc, map_key, start):
    stamp = time.strftime(STAMP, time.gmtime(start))
    prefix = f"{schedule}-{pvc}"
    if len(prefix) + 1 + len(stamp) > MAX_NAME:
        # Too long for a name: cut, and keep it unique per PVC with the start of the PVC's UID (the mapKey).
        keep = MAX_NAME - len(stamp) - 1 - 9
        prefix = prefix[:keep].rstrip(".-") + "-" + map_key[:8]
    return f"{prefix}-{stamp}"


def snapshot(name, pvc, taken):
    return {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "metadata": {"name": name},
        "spec": {"pvcName": pvc, "takenAt": time.strftime(RFC3339, time.gmtime(taken))},
    }


def map_pvc(request, now):
    spec = request["parent"]["spec"]
    interval, ttl = int(spec["intervalSeconds"]), int(spec["ttlSeconds"])
    schedule = request["parent"]["metadata"]["name"]
    pvc = request["input"]["metadata"]["name"]
    start = int(now) // interval * interval  # when the current interval began
    existing = dated(request.get("outputs", {}))
    newest = existing[-1][0] if existing else None
    take = newest is None or newest < start
    # Until a newer one is taken, the newest Snapshot stays whatever its age: with a TTL shorter than the interval,
    # dropping it would make the next call take it again.
    kept = [(t, s) for t, s in existing if now - t < ttl or (t == newest and not take)]
    wanted = [snapshot(s["metadata"]["name"], pvc, t) for t, s in kept]
    if take:
        wanted.append(snapshot(snapshot_name(schedule, pvc, request["mapKey"], start), pvc, start))
    # Next call: when the next interval begins or the oldest kept Snapshot expires, whichever comes first (the
    # controller's resyncPeriodSeconds calls it anyway; this is just on time).
    due = [start + interval] + [t + ttl for t, _ in kept if now - t < ttl]
    return {"outputs": wanted, "resyncAfterSeconds": max(min(due) - now, 0.1)}


def tombstone(request, now):
    ttl = int(request["parent"]["spec"]["ttlSeconds"])
    # Kept Snapshots are offered again on every resync, until this lets them go.
    return {"outputs": [s for t, s in dated(request.get("outputs", {})) if now - t < ttl]}


if __name__ == "__main__":
    serve({"/map": lambda request: map_pvc(request, time.time()),
           "/tombstone": lambda request: tombstone(request, time.time())})
