/**
 * Sharding ({@code --sharding}): parents spread over replicas with Kubernetes Leases and labels.
 *
 * <ul>
 *   <li>Membership: each replica holds a Lease of its own ({@code <installation>-shard-<shard>}, labelled with the
 *   installation and the shard); {@link dev.metareactor.engine.shard.Membership} reads every replica's lease and
 *   says which shards are live (renewed within the lease duration, by this replica's clock, as client-go judges a
 *   leader's lease).</li>
 *   <li>Assignment: a parent belongs to the live shard with the highest {@link dev.metareactor.engine.shard.Rendezvous}
 *   weight for its UID; the owner is recorded on the parent as the label {@code shard.metareactor.dev/<controller>}
 *   ({@link dev.metareactor.engine.shard.ShardKeys}), and every object the engine writes for it (children,
 *   attachments, outputs, ControllerRevisions) carries the same label.</li>
 *   <li>Each replica caches only its share: a sharded controller's parent and owned-object informers select that
 *   label with the replica's shard. A hosted controller's whole part in this (its informers, the label on what it
 *   writes, its registration, where each parent is synced, the {@code metareactor_shard_parents} gauge) is its
 *   {@link dev.metareactor.engine.shard.ShardParticipant}.</li>
 *   <li>Moves: the owner itself moves a parent whose rendezvous winner is another live shard, in a sync of that
 *   parent (so never while the parent's hook is being called): it relabels the parent's owned objects, then the
 *   parent, guarded by its resourceVersion; the new owner's informers then see both. Unassigned parents, and the
 *   parents and owned objects of a shard whose lease expired, are moved by the {@link
 *   dev.metareactor.engine.shard.ShardAssigner} of the replica holding the leader lease, which also sweeps every few
 *   minutes for owned objects without the label.</li>
 *   <li>Handover: a moved parent records the versions its owned objects' relabels got, and its new owner syncs it
 *   only once its caches have caught up to them ({@link dev.metareactor.engine.shard.Handover}).</li>
 * </ul>
 */
@NullMarked
package dev.metareactor.engine.shard;

import org.jspecify.annotations.NullMarked;
