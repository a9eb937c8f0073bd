package dev.metareactor.engine.shard;

import dev.metareactor.engine.kube.ApiResource;
import dev.metareactor.engine.kube.KubeObject;
import java.util.List;
import java.util.Objects;
import java.util.function.Predicate;

/**
 * What the {@link ShardAssigner} needs of a hosted controller to assign its parents and move them off dead shards.
 *
 * @param kind the controller object's kind
 * @param name the controller object's name
 * @param ownerLabel the controller's owner label ({@link ShardKeys#ownerLabel})
 * @param synced the resources whose objects it syncs (parents, targets), each with which of them it is responsible
 *     for (judged on metadata alone: labels, annotations, finalizers)
 * @param owned the resources of the objects it writes for them (children, attachments, outputs, revisions)
 */
public record ShardedController(String kind, String name, String ownerLabel, List<Synced> synced,
    List<ApiResource> owned) {

  public ShardedController {
    Objects.requireNonNull(kind, "kind");
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(ownerLabel, "ownerLabel");
    synced = List.copyOf(synced);
    owned = List.copyOf(owned);
  }

  /** {@code <Kind> <name>}, for logs. */
  public String description() {
    return kind + " " + name;
  }

  /** A synced resource and the controller's responsibility for its objects. */
  public record Synced(ApiResource resource, Predicate<KubeObject> responsible) {
    public Synced {
      Objects.requireNonNull(resource, "resource");
      Objects.requireNonNull(responsible, "responsible");
    }
  }
}
