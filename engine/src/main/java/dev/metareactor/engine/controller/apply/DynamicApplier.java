package dev.metareactor.engine.controller.apply;

import dev.metareactor.apply.ApplyResult;
import dev.metareactor.apply.DynamicApply;
import dev.metareactor.apply.FieldSet;
import dev.metareactor.apply.LastAppliedConfiguration;
import dev.metareactor.apply.ServerSideApply;
import dev.metareactor.engine.kube.ApiResource;
import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.engine.kube.ObjectApi;
import dev.metareactor.engine.kube.OwnerRef;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * Metacontroller's dynamic apply ({@link DynamicApply}): a child is created with the last-applied annotation and a
 * ControllerRef, and updated with a PUT of the three-way merge of the cached object, the annotation and the desired
 * object.
 *
 * <p>A verdict "nothing to do" is remembered ({@link SettledChildren}): the resyncs of a converged child neither parse
 * it nor merge again until it or its desired state changes.
 *
 * <p>A child that server-side apply wrote (the strategy was switched back) has no annotation but the engine's field
 * manager's field set: it is judged as server-side apply judges it, so a converged child costs nothing, and its first
 * write merges against the fields that set names, as the object shows them — what was applied — and records the
 * annotation from then on.
 */
final class DynamicApplier implements ChildApplier {

  private final ObjectApi api;
  private final String fieldManager;
  private final Map<String, String> ownLabels;
  private final SettledChildren settled = new SettledChildren();

  /**
   * @param fieldManager the server-side apply field manager whose field sets say a child was applied that way
   * @param ownLabels the engine's labels, written on create and kept by the merge (it keeps what it did not apply)
   */
  DynamicApplier(ObjectApi api, String fieldManager, Map<String, String> ownLabels) {
    this.api = Objects.requireNonNull(api, "api");
    this.fieldManager = Objects.requireNonNull(fieldManager, "fieldManager");
    this.ownLabels = Map.copyOf(ownLabels);
  }

  @Override
  public Mono<KubeObject> create(KubeObject owner, ApiResource resource, ObjectNode desired) {
    ObjectNode object = DynamicApply.create(desired).object();
    OwnerRef.addControllerTo(object, owner);
    ChildApplier.addLabels(object, ownLabels);
    return api.create(resource, object).map(ObjectApi.Written::object);
  }

  @Override
  public Map<String, String> ownLabels() {
    return ownLabels;
  }

  @Override
  public @Nullable Change change(KubeObject owner, ApiResource resource, KubeObject current, ObjectNode desired) {
    long fingerprint = SettledChildren.fingerprint(owner, desired, ownLabels);
    if (settled.isSettled(current, fingerprint)) {
      return null;
    }
    ObjectNode observed = current.toTree();
    FieldSet applied = current.appliedFields();
    ApplyResult result;
    if (applied != null && LastAppliedConfiguration.raw(observed) == null) {
      ObjectNode configuration = ServerSideApply.configuration(desired);
      OwnerRef.addControllerTo(configuration, owner);
      ChildApplier.addLabels(configuration, ownLabels);
      if (ServerSideApply.unchanged(observed, configuration, applied)) {
        settled.settle(current, fingerprint);
        return null;
      }
      result = DynamicApply.update(observed, lastApplied(observed, applied), desired);
    } else {
      result = DynamicApply.update(observed, desired);
    }
    if (!result.changed()) {
      settled.settle(current, fingerprint);
      return null;
    }
    ObjectNode merged = result.object();
    return new Change() {
      @Override
      public Mono<Void> write() {
        return api.update(resource, merged).then();
      }

      @Override
      public Mono<Boolean> confirmed() {
        return Mono.just(true);
      }
    };
  }

  /**
   * What server-side apply applied, as the object shows it; without the ControllerRef, which the engine adds to a
   * child itself and dynamic apply never records.
   */
  private static JsonNode lastApplied(ObjectNode observed, FieldSet applied) {
    ObjectNode selected = applied.select(observed);
    if (selected.get("metadata") instanceof ObjectNode metadata) {
      metadata.remove("ownerReferences");
    }
    return selected;
  }

  @Override
  public String toString() {
    return "dynamic apply";
  }
}
