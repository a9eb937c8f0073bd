package dev.metareactor.engine.controller.decorator;

import dev.metareactor.engine.api.DecoratorControllerSpec;
import dev.metareactor.engine.discovery.ApiResource;
import dev.metareactor.engine.informer.InformerLease;
import dev.metareactor.engine.informer.ObjectEvent;
import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.engine.kube.OwnerRef;
import java.util.List;
import java.util.Objects;
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
 *       target type's cache, checked by UID); attachments are never adopted, so orphans are ignored.</li>
 * </ul>
 */
final class DecoratorRouter {

  /** One targeted resource with its rule and its informer. */
  record TargetType(ApiResource resource, DecoratorControllerSpec.Target rule, InformerLease informer) {}

  private final List<TargetType> targets;
  private final String finalizerName;
  private final Consumer<TargetKey> enqueue;
  private final Consumer<TargetKey> gone;

  DecoratorRouter(List<TargetType> targets, String finalizerName, Consumer<TargetKey> enqueue,
      Consumer<TargetKey> gone) {
    this.targets = List.copyOf(targets);
    this.finalizerName = Objects.requireNonNull(finalizerName, "finalizerName");
    this.enqueue = Objects.requireNonNull(enqueue, "enqueue");
    this.gone = Objects.requireNonNull(gone, "gone");
  }

  void onTargetEvent(TargetType type, ObjectEvent event) {
    KubeObject target = event.object();
    TargetKey key = keyOf(type.resource(), target);
    if (event.type() == ObjectEvent.Type.DELETED) {
      gone.accept(key);
    }
    if (!responsibleFor(type, target)) {
      return;
    }
    if (type.rule().ignoreStatusChanges() && event.changedOnlyStatus()) {
      return;
    }
    enqueue.accept(key);
  }

  void onAttachmentEvent(ObjectEvent event) {
    if (event.isResync()) {
      return; // the target's own resync covers it
    }
    event.controllers().forEach(owned -> routeToOwner(owned.getKey(), owned.getValue()));
  }

  private void routeToOwner(KubeObject attachment, OwnerRef controller) {
    if (controller == null) {
      return;
    }
    String group = ApiResource.groupOf(controller.apiVersion());
    for (TargetType type : targets) {
      ApiResource resource = type.resource();
      if (!resource.kind().equals(controller.kind()) || !resource.group().equals(group)) {
        continue;
      }
      String namespace = resource.namespaced() ? attachment.namespace() : "";
      type.informer().get(namespace, controller.name())
          .filter(target -> Objects.equals(target.uid(), controller.uid()))
          .filter(target -> responsibleFor(type, target))
          .ifPresent(target -> enqueue.accept(keyOf(resource, target)));
    }
  }

  /** Whether the target matches its rule's selectors (decorated now). */
  static boolean selected(TargetType type, KubeObject target) {
    return type.rule().labels().matches(target.labels()) && type.rule().annotations().matches(target.annotations());
  }

  /** Whether this controller syncs {@code target}: selected, or still holding our finalizer. */
  boolean responsibleFor(TargetType type, KubeObject target) {
    if (selected(type, target)) {
      return true;
    }
    return target.finalizers().contains(finalizerName);
  }

  static TargetKey keyOf(ApiResource resource, KubeObject target) {
    return new TargetKey(resource, resource.namespaced() ? target.namespace() : "", target.name());
  }

}
