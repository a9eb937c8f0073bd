package dev.metareactor.engine.controller.composite;

import dev.metareactor.engine.api.CompositeControllerSpec;
import dev.metareactor.engine.controller.ChildSelector;
import dev.metareactor.engine.controller.ChildType;
import dev.metareactor.engine.controller.OtherNamespaceChildren;
import dev.metareactor.engine.controller.ParentKey;
import dev.metareactor.engine.controller.SyncedResource;
import dev.metareactor.engine.informer.ObjectEvent;
import dev.metareactor.engine.kube.ApiResource;
import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.engine.kube.OwnerRef;
import dev.metareactor.engine.queue.Trigger;
import dev.metareactor.engine.selector.SelectorIndex;
import java.util.Objects;
import java.util.Optional;
import java.util.function.BiConsumer;
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
 *       checked by UID. An update that moved a child from one parent to another enqueues both. A child added
 *       already controlled by its parent is the echo of the engine's own create
 *       ({@link dev.metareactor.engine.queue.Trigger.Cause#ECHO}); every other child event is a change. With its
 *       child type's {@code ignoreStatusChanges}, an update that changed nothing but the child's status is
 *       dropped.</li>
 *   <li>With {@code metareactor.dev/cross-namespace-children}, a child in another namespace than its parent's (no
 *       ControllerRef: {@link OtherNamespaceChildren}) enqueues the parent its label and annotation name, found by
 *       name in the parent cache and checked by UID; its previous parent too when an update released it.</li>
 *   <li>A deleted parent is forgotten by what keeps state per parent (its related-object rules).</li>
 *   <li>An orphan's event (not one marked as the child of a parent in another namespace) enqueues the parents that
 *       may adopt it: those whose selector matches its labels, found in a {@link SelectorIndex} of the parents (kept
 *       up to date from the parent events), never by testing every parent's selector.</li>
 * </ul>
 */
final class CompositeRouter {

  private final CompositeControllerSpec spec;
  private final SyncedResource parents;
  private final BiConsumer<ParentKey, Trigger> enqueue;
  private final Consumer<ParentKey> gone;
  private final SelectorIndex<ParentKey> selectors = new SelectorIndex<>();
  /** Whether parents may have children in other namespaces, routed by their label ({@link OtherNamespaceChildren}). */
  private final boolean otherNamespaces;

  CompositeRouter(CompositeControllerSpec spec, SyncedResource parents, BiConsumer<ParentKey, Trigger> enqueue,
      Consumer<ParentKey> gone) {
    this(spec, parents, enqueue, gone, false);
  }

  /** @param otherNamespaces whether parents may have children in other namespaces */
  CompositeRouter(CompositeControllerSpec spec, SyncedResource parents, BiConsumer<ParentKey, Trigger> enqueue,
      Consumer<ParentKey> gone, boolean otherNamespaces) {
    this.otherNamespaces = otherNamespaces;
    this.spec = Objects.requireNonNull(spec, "spec");
    this.parents = Objects.requireNonNull(parents, "parents");
    this.enqueue = Objects.requireNonNull(enqueue, "enqueue");
    this.gone = Objects.requireNonNull(gone, "gone");
  }

  void onParentEvent(ObjectEvent event) {
    KubeObject parent = event.object();
    ParentKey key = keyOf(parent);
    boolean responsible = parents.responsibleFor(parent);
    if (responsible && event.type() != ObjectEvent.Type.DELETED) {
      if (selectorMayHaveChanged(key, event)) {
        fileSelector(key, parent);
      }
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
    enqueue.accept(key, event.trigger());
  }

  /**
   * An event of a child of {@code type}: dropped when the type ignores it ({@code ignoreStatusChanges} and a change of
   * status alone), else routed as {@link #onChildEvent(ObjectEvent)} routes it.
   */
  void onChildEvent(ChildType type, ObjectEvent event) {
    if (!type.ignores(event)) {
      onChildEvent(event);
    }
  }

  void onChildEvent(ObjectEvent event) {
    if (event.isResync()) {
      return; // the parent's own resync covers it
    }
    KubeObject child = event.object();
    Optional<OtherNamespaceChildren.ParentRef> parent = OtherNamespaceChildren.parentOf(child);
    if (child.controller() == null && !child.labels().containsKey(OtherNamespaceChildren.PARENT_UID_LABEL)) {
      routeOrphan(event);
    }
    event.controllers().forEach(owned -> routeToOwner(owned.getKey(), owned.getValue(), event));
    if (otherNamespaces) {
      parent.ifPresent(named -> routeToParentElsewhere(child, named, event));
      KubeObject before = event.previous();
      if (event.type() == ObjectEvent.Type.UPDATED && before != null) {
        // released, or handed to another parent: the parent it had must notice
        OtherNamespaceChildren.parentOf(before).filter(named -> !named.equals(parent.orElse(null)))
            .ifPresent(named -> routeToParentElsewhere(before, named, event));
      }
    }
  }

  /** A child in another namespace than its parent's: to the parent its label and annotation name, checked by UID. */
  private void routeToParentElsewhere(KubeObject child, OtherNamespaceChildren.ParentRef named, ObjectEvent event) {
    if (!parents.resource().namespaced() || named.namespace().equals(child.namespace())) {
      return; // a child in its parent's namespace is routed by its ControllerRef
    }
    parents.responsible(named.namespace(), named.name())
        .filter(parent -> named.uid().equals(parent.uid()))
        .ifPresent(parent -> enqueue.accept(keyOf(parent), event.ownedTrigger(child)));
  }

  private void routeToOwner(KubeObject child, OwnerRef controller, ObjectEvent event) {
    parents.controllerOf(child, controller).ifPresent(parent -> enqueue.accept(keyOf(parent),
        event.ownedTrigger(child)));
  }

  /** An orphan may be adopted by the parents whose selector matches it; a deleted or dying one by none. */
  private void routeOrphan(ObjectEvent event) {
    KubeObject orphan = event.object();
    if (event.type() == ObjectEvent.Type.DELETED || orphan.deleting()) {
      return;
    }
    for (ParentKey key : selectors.matching(orphan.namespace(), orphan.labels())) {
      parents.responsible(key.namespace(), key.name())
          .ifPresent(parent -> enqueue.accept(key, event.triggerAbout(Trigger.Cause.CHILD, orphan)));
    }
  }

  /**
   * Whether the parent's child selector may differ from the one filed: it is derived from the UID
   * ({@code generateSelector}) or from {@code spec.selector}, which only changes with the generation. Every status
   * write of a parent is an update event; reading its selector again for each would parse the parent each time.
   */
  private boolean selectorMayHaveChanged(ParentKey key, ObjectEvent event) {
    KubeObject before = event.previous();
    KubeObject now = event.object();
    return before == null || !selectors.contains(key) || !Objects.equals(before.uid(), now.uid())
        || (!spec.generateSelector() && (before.generation() != now.generation() || now.generation() == 0));
  }

  /** Files the parent's child selector in the index; a parent without a usable selector adopts nothing. */
  private void fileSelector(ParentKey key, KubeObject parent) {
    try {
      selectors.put(key, key.namespace(), ChildSelector.of(parent, spec.generateSelector()));
    } catch (ChildSelector.InvalidSelectorException e) {
      selectors.remove(key); // its sync reports the problem
    }
  }

  private ParentKey keyOf(KubeObject parent) {
    return keyOf(parents.resource(), parent);
  }

  static ParentKey keyOf(ApiResource parentResource, KubeObject parent) {
    return new ParentKey(parentResource.namespaced() ? parent.namespace() : "", parent.name());
  }
}
