package dev.metareactor.engine.controller.composite;

import dev.metareactor.engine.api.CompositeControllerSpec;
import dev.metareactor.engine.controller.ChildSelector;
import dev.metareactor.engine.controller.ParentKey;
import dev.metareactor.engine.discovery.ApiResource;
import dev.metareactor.engine.informer.InformerIndexes;
import dev.metareactor.engine.informer.InformerLease;
import dev.metareactor.engine.informer.ObjectEvent;
import dev.metareactor.engine.selector.SelectorIndex;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.util.List;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * Turns informer events into parent keys for one CompositeController. Runs on informer threads: it only reads
 * caches and enqueues — no API calls, no hook calls, no blocking.
 *
 * <ul>
 *   <li>A parent event enqueues that parent if this controller is responsible for it (its labels match
 *       {@code parentResource.labelSelector}, or it still carries this controller's finalizer). With
 *       {@code ignoreStatusChanges}, an update that changed nothing but status is dropped (resyncs are kept).</li>
 *   <li>A child event enqueues the parent its ControllerRef points to, found by name in the parent cache and
 *       checked by UID. An update that moved a child from one parent to another enqueues both.</li>
 *   <li>A deleted parent is forgotten by what keeps state per parent (its related-object rules).</li>
 *   <li>An orphan's event enqueues the parents that may adopt it: those whose selector matches its labels, found
 *       in a {@link SelectorIndex} of the parents (kept up to date from the parent events), never by testing every
 *       parent's selector.</li>
 * </ul>
 */
final class CompositeRouter {

  private final CompositeControllerSpec spec;
  private final ApiResource parentResource;
  private final InformerLease parents;
  private final Consumer<ParentKey> enqueue;
  private final Consumer<ParentKey> gone;
  private final KubernetesSerialization json;
  private final SelectorIndex<ParentKey> selectors = new SelectorIndex<>();

  CompositeRouter(CompositeControllerSpec spec, ApiResource parentResource, InformerLease parents,
      Consumer<ParentKey> enqueue, Consumer<ParentKey> gone, KubernetesSerialization json) {
    this.spec = Objects.requireNonNull(spec, "spec");
    this.parentResource = Objects.requireNonNull(parentResource, "parentResource");
    this.parents = Objects.requireNonNull(parents, "parents");
    this.enqueue = Objects.requireNonNull(enqueue, "enqueue");
    this.gone = Objects.requireNonNull(gone, "gone");
    this.json = Objects.requireNonNull(json, "json");
  }

  void onParentEvent(ObjectEvent event) {
    GenericKubernetesResource parent = event.object();
    ParentKey key = keyOf(parent.getMetadata());
    boolean responsible = responsibleFor(parent);
    if (responsible && event.type() != ObjectEvent.Type.DELETED) {
      fileSelector(key, parent);
    } else {
      selectors.remove(key);
    }
    if (event.type() == ObjectEvent.Type.DELETED) {
      gone.accept(key);
    }
    if (!responsible) {
      return;
    }
    if (spec.ignoreStatusChanges() && event.changedOnlyStatus()) {
      return;
    }
    enqueue.accept(key);
  }

  void onChildEvent(ObjectEvent event) {
    if (event.isResync()) {
      return; // the parent's own resync covers it
    }
    if (InformerIndexes.controllerOf(event.object()) == null) {
      routeOrphan(event);
    }
    event.controllers().forEach(owned -> routeToOwner(owned.getKey(), owned.getValue()));
  }

  private void routeToOwner(GenericKubernetesResource child, OwnerReference controller) {
    if (controller == null || !Objects.equals(controller.getKind(), parentResource.kind())
        || !Objects.equals(ApiResource.groupOf(controller.getApiVersion()), parentResource.group())) {
      return;
    }
    String namespace = parentResource.namespaced() ? Objects.requireNonNullElse(child.getMetadata().getNamespace(), "") : "";
    parents.get(namespace, controller.getName())
        .filter(parent -> Objects.equals(parent.getMetadata().getUid(), controller.getUid()))
        .filter(this::responsibleFor)
        .ifPresent(parent -> enqueue.accept(keyOf(parent.getMetadata())));
  }

  /** An orphan may be adopted by the parents whose selector matches it; a deleted or dying one by none. */
  private void routeOrphan(ObjectEvent event) {
    GenericKubernetesResource orphan = event.object();
    if (event.type() == ObjectEvent.Type.DELETED || orphan.getMetadata().getDeletionTimestamp() != null) {
      return;
    }
    String namespace = Objects.requireNonNullElse(orphan.getMetadata().getNamespace(), "");
    for (ParentKey key : selectors.matching(namespace, orphan.getMetadata().getLabels())) {
      parents.get(key.namespace(), key.name()).filter(this::responsibleFor).ifPresent(parent -> enqueue.accept(key));
    }
  }

  /** Files the parent's child selector in the index; a parent without a usable selector adopts nothing. */
  private void fileSelector(ParentKey key, GenericKubernetesResource parent) {
    try {
      selectors.put(key, key.namespace(), ChildSelector.of(parent, spec.generateSelector(), json));
    } catch (ChildSelector.InvalidSelectorException e) {
      selectors.remove(key); // its sync reports the problem
    }
  }

  /** Whether this controller syncs {@code parent}: selected by its labels, or still holding our finalizer. */
  boolean responsibleFor(GenericKubernetesResource parent) {
    if (spec.parentSelector().matches(parent.getMetadata().getLabels())) {
      return true;
    }
    List<String> finalizers = parent.getMetadata().getFinalizers();
    return finalizers != null && finalizers.contains(spec.finalizerName());
  }


  ParentKey keyOf(ObjectMeta meta) {
    return new ParentKey(parentResource.namespaced() ? Objects.requireNonNullElse(meta.getNamespace(), "") : "",
        meta.getName());
  }
}
