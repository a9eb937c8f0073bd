package dev.metareactor.engine.config;

import java.util.Objects;

/**
 * {@code --sharding}: spread parents over the replicas.
 *
 * @param enabled {@code --sharding}
 * @param shardName {@code --shard-name}: this replica's shard, a label value on every object it owns; empty means the
 *     host (pod) name, which a StatefulSet keeps across restarts
 */
public record ShardingSettings(boolean enabled, String shardName) {

  /** Off. */
  public static final ShardingSettings OFF = new ShardingSettings(false, "");

  public ShardingSettings {
    Objects.requireNonNull(shardName, "shardName");
  }
}
