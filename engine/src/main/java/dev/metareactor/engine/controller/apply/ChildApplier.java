package dev.metareactor.engine.controller.apply;

import dev.metareactor.engine.config.ApplyStrategy;
import dev.metareactor.engine.kube.ApiResource;
import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.engine.kube.ObjectApi;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import tools.jackson.databind.node.ObjectNode;

/**
 * Writes the objects a controller owns, one apply strategy ({@code --apply-strategy}). What to write is the
 * caller's ({@link dev.metareactor.engine.controller.ChildrenManager}: which objects to create, which to delete, and
 * the update method); how to write one, and whether an existing one needs a write at all, is the applier's.
 *
 * <p>{@link #change} decides from the cached object alone, without a request: a child that needs nothing costs
 * nothing. Errors of the writes are {@link dev.metareactor.engine.kube.ApiException}s, as the API server answered.
 * Thread-safe: one applier serves all syncs of a controller at once.
 */
public interface ChildApplier {

  /** The applier {@code strategy} names. */
  static ChildApplier of(ApplyStrategy strategy, ObjectApi api, String fieldManager) {
    return of(strategy, api, fieldManager, Map.of());
  }

  /**
   * The applier {@code strategy} names, keeping {@code ownLabels} on every object it writes besides what the hook
   * asks for (with {@code --sharding}, the owner label of the replica's shard). They are the engine's, not the
   * hook's: dynamic apply writes them on create without recording them in the last-applied annotation, so changing
   * them never counts as a change of the desired object (a {@code Recreate} child is never re-created for them).
   */
  static ChildApplier of(ApplyStrategy strategy, ObjectApi api, String fieldManager, Map<String, String> ownLabels) {
    Objects.requireNonNull(strategy, "strategy");
    return switch (strategy) {
      case DYNAMIC_APPLY -> new DynamicApplier(api, fieldManager, ownLabels);
      case SERVER_SIDE_APPLY -> new ServerSideApplier(api, fieldManager, ownLabels);
    };
  }

  /** {@code labels} added to {@code object}'s {@code metadata.labels} (in place). */
  static void addLabels(ObjectNode object, Map<String, String> labels) {
    if (labels.isEmpty()) {
      return;
    }
    ObjectNode metadata = (ObjectNode) object.get("metadata");
    ObjectNode existing = metadata.get("labels") instanceof ObjectNode map ? map : metadata.putObject("labels");
    labels.forEach(existing::put);
  }

  /** What writing a desired object over its existing one would do. */
  interface Change {

    /** Writes the desired state over the object in place ({@code InPlace}, {@code RollingInPlace}). */
    Mono<Void> write();

    /**
     * Whether the object really differs from the desired state, so that deleting it to re-create it
     * ({@code Recreate}) is warranted; a strategy that may report a difference the API server would not make
     * (server-side apply, over a value the server normalises) asks the server first.
     */
    Mono<Boolean> confirmed();
  }

  /**
   * Creates the desired object, controlled by {@code owner}. Only ever a create: when an object of its name exists
   * (one the caller has not seen, such as an object another replica's share holds or someone else's), it fails with
   * HTTP 409 and that object is left exactly as it is.
   *
   * @param desired the object as the hook asked for it, namespace settled; not changed
   * @return the object as the API server stored it
   */
  Mono<KubeObject> create(KubeObject owner, ApiResource resource, ObjectNode desired);

  /** The labels the applier keeps on every object it writes, besides the hook's ({@link #of}); often none. */
  Map<String, String> ownLabels();

  /**
   * What writing {@code desired} over {@code current} would change, or {@code null} when nothing: decided from the
   * cached object, without a request.
   *
   * @param owner the object's controller
   * @param current the object as cached
   * @param desired the object as the hook asked for it; not changed
   * @throws dev.metareactor.apply.ApplyException when the object's recorded apply state is unreadable
   */
  @Nullable Change change(KubeObject owner, ApiResource resource, KubeObject current, ObjectNode desired);
}
