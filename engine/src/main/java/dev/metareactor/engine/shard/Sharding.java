package dev.metareactor.engine.shard;

import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * What a hosted controller knows of sharding: off ({@link #disabled()}, every replica syncs every parent, as
 * without {@code --sharding}), or this replica's shard, the live membership, and the sharder to register with.
 */
public final class Sharding {

  private static final Sharding DISABLED = new Sharding(null, null);

  private final @Nullable Membership membership;
  private final @Nullable ShardAssigner assigner;

  private Sharding(@Nullable Membership membership, @Nullable ShardAssigner assigner) {
    this.membership = membership;
    this.assigner = assigner;
  }

  /** No sharding. */
  public static Sharding disabled() {
    return DISABLED;
  }

  /** Sharding as this replica sees it. */
  public static Sharding of(Membership membership, ShardAssigner assigner) {
    return new Sharding(Objects.requireNonNull(membership, "membership"),
        Objects.requireNonNull(assigner, "assigner"));
  }

  public boolean enabled() {
    return membership != null;
  }

  /**
   * The membership.
   *
   * @throws IllegalStateException when sharding is off
   */
  public Membership membership() {
    if (membership == null) {
      throw new IllegalStateException("sharding is off");
    }
    return membership;
  }

  /**
   * Hands a controller to the sharder; closing the registration takes it back.
   *
   * @throws IllegalStateException when sharding is off
   */
  public AutoCloseable register(ShardedController controller) {
    if (assigner == null) {
      throw new IllegalStateException("sharding is off");
    }
    return assigner.register(controller);
  }

  /** The label selector of this replica's share of a controller with this owner label. */
  public String selector(String ownerLabel) {
    return ownerLabel + "=" + membership().self();
  }
}
