package dev.metareactor.engine.controller.decorator;

import dev.metareactor.engine.api.DecoratorControllerSpec;
import dev.metareactor.engine.controller.ChildType;
import dev.metareactor.engine.controller.SyncedResource;
import dev.metareactor.engine.informer.ObjectEvent;
import dev.metareactor.engine.kube.ApiResource;
import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.engine.kube.OwnerRef;
import dev.metareactor.engine.queue.Trigger;
import java.util.List;
import java.util.Objects;
import java.util.function.BiConsumer;
import java.util.function.Consumer;

/**
 * Turns informer events into target keys for one DecoratorController. Runs on informer threads: it only reads
 * caches and enqueues.
 *
 * <ul>
 *   <li>A target event enqueues the target if this controller is responsible for it: its labels and annotations
 *       match its resource rule's selectors, or it still carries this controller's finalizer (it opted out and must
 *       be finalized). With {@code ignoreStatusChanges}, an update that changed nothing but status is dropped.</li>
 *   <li>An attachment event enqueues the target its ControllerRef points to (looked up by kind and name in that
 *       target type's cache, checked by UID); attachments are never adopted, so orphans are ignored. With its
 *       attachment type's {@code ignoreStatusChanges}, an update that changed nothing but the attachment's status is
 *       dropped.</li>
 * </ul>
 */
final class DecoratorRouter {

  /** One targeted resource, as synced, with its rule. */
  record TargetType(SyncedResource synced, DecoratorControllerSpec.Target rule) {
    ApiResource resource() {
      return synced.resource();
    }
  }

  private final List<TargetType> targets;
  private final BiConsumer<TargetKey, Trigger> enqueue;
  private final Consumer<TargetKey> gone;

  DecoratorRouter(List<TargetType> targets, BiConsumer<TargetKey, Trigger> enqueue, Consumer<TargetKey> gone) {
    this.targets = List.copyOf(targets);
    this.enqueue = Objects.requireNonNull(enqueue, "enqueue");
    this.gone = Objects.requireNonNull(gone, "gone");
  }

  void onTargetEvent(TargetType type, ObjectEvent event) {
    KubeObject target = event.object();
    TargetKey key = keyOf(type.resource(), target);
    if (event.type() == ObjectEvent.Type.DELETED) {
      gone.accept(key);
    }
    if (!type.synced().responsibleFor(target)) {
      return;
    }
    if (type.rule().ignoreStatusChanges() && event.changedOnlyStatus()) {
      return;
    }
    enqueue.accept(key, event.trigger());
  }

  /**
   * An event of an attachment of {@code type}: dropped when the type ignores it ({@code ignoreStatusChanges} and a
   * change of status alone), else routed as {@link #onAttachmentEvent(ObjectEvent)} routes it.
   */
  void onAttachmentEvent(ChildType type, ObjectEvent event) {
    if (!type.ignores(event)) {
      onAttachmentEvent(event);
    }
  }

  void onAttachmentEvent(ObjectEvent event) {
    if (event.isResync()) {
      return; // the target's own resync covers it
    }
    event.controllers().forEach(owned -> routeToOwner(owned.getKey(), owned.getValue(), event));
  }

  private void routeToOwner(KubeObject attachment, OwnerRef controller, ObjectEvent event) {
    Trigger trigger = event.ownedTrigger(attachment);
    for (TargetType type : targets) {
      type.synced().controllerOf(attachment, controller)
          .ifPresent(target -> enqueue.accept(keyOf(type.resource(), target), trigger));
    }
  }

  /** Whether the target matches its rule's selectors (decorated now). */
  static boolean selected(DecoratorControllerSpec.Target rule, KubeObject target) {
    return rule.labels().matches(target.labels()) && rule.annotations().matches(target.annotations());
  }

  static TargetKey keyOf(ApiResource resource, KubeObject target) {
    return new TargetKey(resource, resource.namespaced() ? target.namespace() : "", target.name());
  }

}
