package dev.metareactor.engine.controller.apply;

import dev.metareactor.apply.DynamicApply;
import dev.metareactor.apply.JsonEquality;
import dev.metareactor.apply.LastAppliedConfiguration;
import dev.metareactor.apply.OwnershipHandover;
import dev.metareactor.apply.ServerSideApply;
import dev.metareactor.engine.kube.ApiResource;
import dev.metareactor.engine.kube.KubeApi;
import dev.metareactor.engine.kube.KubeJson;
import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.engine.kube.ObjectApi;
import dev.metareactor.engine.kube.OwnerRef;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * Kubernetes server-side apply, as Metacontroller's {@code --apply-strategy=server-side-apply} writes: every child is
 * applied with the engine's field manager ({@code --apply-strategy-ssa-field-manager}) and {@code force}, its
 * ControllerRef in the configuration, and no last-applied annotation; but a child is created by an apply that can
 * only create ({@link #create}), so an object of its name that the engine has not seen is never taken over.
 *
 * <p>Whether a child needs an apply is decided from the cache by the field set the manager owns in it
 * ({@link ServerSideApply#unchanged}): a field the manager owns that someone changed is drift and is applied back, on
 * the next sync, whether or not it moved {@code metadata.generation} (Metacontroller applies only when the hash of
 * the configuration, the generation or — for objects without one — the resourceVersion changed, and so leaves a
 * hand-edited label of a Deployment as it is). That verdict may call "changed" a value the server stores otherwise
 * than written (a quantity {@code 1000m} kept as {@code 1}); so when an apply (or a dry run) shows that the object
 * already is what the configuration makes, that is remembered too, and the same configuration is not applied again
 * until the object changes: at most one request per change of either.
 *
 * <p>Every verdict "nothing to do" is remembered ({@link SettledChildren}), so the resyncs of a converged child cost
 * a serialization of the desired object into a reused buffer and a lookup, as under dynamic apply; the field set is
 * read and walked again only when the child or its desired state changed.
 *
 * <p>A child still carrying the last-applied annotation was written by dynamic apply. It is judged as dynamic apply
 * judges it, so switching a converged cluster to server-side apply writes nothing; the first time it must change,
 * it is handed over ({@link OwnershipHandover}: the fields dynamic apply applied move to the manager, the annotation
 * goes; guarded by the resourceVersion) and then applied, so that fields the hook dropped are removed.
 *
 * <p>{@code Recreate} deletes a child only when a dry-run apply shows it would really change, as Metacontroller
 * does.
 */
final class ServerSideApplier implements ChildApplier {

  private static final Logger LOG = LoggerFactory.getLogger(ServerSideApplier.class);
  /** Names the API server gives the writes of dynamic apply: Metacontroller's and this engine's User-Agent. */
  private static final List<String> DYNAMIC_APPLY_MANAGERS = List.of("metacontroller", KubeApi.USER_AGENT);

  private final ObjectApi api;
  private final String fieldManager;
  private final Map<String, String> ownLabels;
  private final Set<String> formerManagers;
  private final SettledChildren settled = new SettledChildren();

  /** @param ownLabels the engine's labels, applied with every configuration (and so owned by the manager) */
  ServerSideApplier(ObjectApi api, String fieldManager, Map<String, String> ownLabels) {
    this.api = Objects.requireNonNull(api, "api");
    this.fieldManager = Objects.requireNonNull(fieldManager, "fieldManager");
    this.ownLabels = Map.copyOf(ownLabels);
    Set<String> former = new LinkedHashSet<>(DYNAMIC_APPLY_MANAGERS);
    former.add(fieldManager);
    this.formerManagers = Set.copyOf(former);
  }

  /**
   * A create-only apply ({@link ObjectApi#applyCreate}): never a forced apply over an object the engine has not seen
   * as its own (under {@code --sharding} the caches do not show objects without this replica's label, so a user's
   * object of the child's name may be there unseen); 409 when one is there. A {@code POST} would not do: the field
   * set the API server records for it is an {@code Update} entry that also holds the fields it defaulted, and which
   * would keep co-owning every field, so a later apply could not remove a field the hook drops.
   */
  @Override
  public Mono<KubeObject> create(KubeObject owner, ApiResource resource, ObjectNode desired) {
    long fingerprint = fingerprint(owner, desired);
    return api.applyCreate(resource, configuration(owner, desired), fieldManager)
        .map(written -> settled(written, fingerprint));
  }

  @Override
  public Map<String, String> ownLabels() {
    return ownLabels;
  }

  @Override
  public @Nullable Change change(KubeObject owner, ApiResource resource, KubeObject current, ObjectNode desired) {
    long fingerprint = fingerprint(owner, desired);
    if (settled.isSettled(current, fingerprint)) {
      return null;
    }
    ObjectNode observed = current.toTree();
    ObjectNode configuration = configuration(owner, desired);
    boolean dynamicallyApplied = LastAppliedConfiguration.raw(observed) != null;
    if (dynamicallyApplied ? !DynamicApply.update(observed, desired).changed()
        : ServerSideApply.unchanged(observed, configuration, current.appliedFields())) {
      settled.settle(current, fingerprint);
      return null;
    }
    return new Change() {
      @Override
      public Mono<Void> write() {
        return (dynamicallyApplied ? handOver(resource, current) : Mono.<Void>empty())
            .then(apply(resource, configuration, fingerprint))
            .then();
      }

      @Override
      public Mono<Boolean> confirmed() {
        return dryRun(resource, current, observed, configuration, fingerprint);
      }
    };
  }

  private ObjectNode configuration(KubeObject owner, ObjectNode desired) {
    ObjectNode configuration = ServerSideApply.configuration(desired);
    OwnerRef.addControllerTo(configuration, owner);
    ChildApplier.addLabels(configuration, ownLabels);
    return configuration;
  }

  /**
   * Applies; the object it answers with needs nothing more for this desired state, whatever the check says.
   *
   * @return the object as the API server stored it
   */
  private Mono<KubeObject> apply(ApiResource resource, ObjectNode configuration, long fingerprint) {
    return api.apply(resource, configuration, fieldManager, false).map(written -> settled(written, fingerprint));
  }

  /** The object an apply answered with, remembered as needing nothing more for the desired state it applied. */
  private KubeObject settled(ObjectApi.Written written, long fingerprint) {
    KubeObject object = KubeObject.parse(written.answer(), fieldManager);
    settled.settle(object, fingerprint);
    return object;
  }

  /** Whether a dry run of the apply changes the object; when not, that is remembered. */
  private Mono<Boolean> dryRun(ApiResource resource, KubeObject current, ObjectNode observed,
      ObjectNode configuration, long fingerprint) {
    return api.apply(resource, configuration, fieldManager, true).map(written -> {
      boolean changes = !JsonEquality.equal(withoutBookkeeping(KubeJson.readObjectTree(written.answer())),
          withoutBookkeeping(observed));
      if (!changes) {
        settled.settle(current, fingerprint);
      }
      return changes;
    });
  }

  /** The object without what the server changes on every write, and status, which an apply never changes. */
  private static JsonNode withoutBookkeeping(JsonNode object) {
    ObjectNode copy = (ObjectNode) object.deepCopy();
    copy.remove("status");
    if (copy.get("metadata") instanceof ObjectNode metadata) {
      DynamicApply.SYSTEM_METADATA_FIELDS.forEach(metadata::remove);
    }
    return copy;
  }

  /**
   * Moves what dynamic apply applied to the field manager and removes the annotation; read fresh, as the cache keeps
   * no {@code managedFields} but the manager's own. A conflict (the object changed since) fails the write with 409.
   */
  private Mono<Void> handOver(ApiResource resource, KubeObject current) {
    return api.getTree(resource, current.namespace(), current.name())
        .flatMap(live -> OwnershipHandover.patch(live, formerManagers, fieldManager)
            .map(patch -> api.patch(resource, current.namespace(), current.name(), ObjectApi.PatchType.JSON, patch)
                .doOnNext(done -> LOG.debug("{}: handed over from dynamic apply to field manager {}",
                    current.describe(), fieldManager))
                .then())
            .orElse(Mono.empty()));
  }

  private long fingerprint(KubeObject owner, ObjectNode desired) {
    return SettledChildren.fingerprint(owner, desired, ownLabels);
  }

  @Override
  public String toString() {
    return "server-side apply as " + fieldManager;
  }
}
