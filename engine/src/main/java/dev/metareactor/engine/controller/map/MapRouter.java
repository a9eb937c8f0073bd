package dev.metareactor.engine.controller.map;

import dev.metareactor.engine.controller.ParentKey;
import dev.metareactor.engine.controller.SyncedResource;
import dev.metareactor.engine.informer.ObjectEvent;
import dev.metareactor.engine.kube.ApiResource;
import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.engine.kube.OwnerRef;
import dev.metareactor.engine.queue.Trigger;
import dev.metareactor.engine.selector.LabelSelector;
import dev.metareactor.engine.selector.SelectorIndex;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * Turns informer events into MapController work, by index, never by scan. Runs on informer threads: it only reads
 * caches and enqueues.
 *
 * <ul>
 *   <li>A parent event (not one that changed only its status: those are the engine's own writes) enqueues every
 *       input of the parent, selected or still with outputs, and files the parent's {@code spec.selector} in a
 *       {@link SelectorIndex}. A parent that is deleted or no longer this controller's is forgotten (its outputs are
 *       the garbage collector's).</li>
 *   <li>An input event enqueues that input for each parent whose selector matches its labels now or matched them
 *       before the change (so a label removed detaches it), found in the selector index: among the parents of its
 *       namespace, or among all parents for a cluster-scoped input.</li>
 *   <li>An output event finds its parent by ControllerRef and its input by the map-key label: a change of only its
 *       status recounts the parent's status; any other change maps that input again (a deleted or edited output is
 *       restored).</li>
 * </ul>
 */
final class MapRouter {

  private final SyncedResource parents;
  private final Function<KubeObject, List<MapKey>> keysOf;
  private final Function<KubeObject, MapKey.InputRef> inputOf;
  private final BiConsumer<MapKey, Trigger> enqueue;
  private final Consumer<ParentKey> statusChanged;
  private final Consumer<ParentKey> gone;
  /** The parents' selectors, by the parent's namespace: for namespaced inputs, selected in that namespace only. */
  private final SelectorIndex<ParentKey> selectors = new SelectorIndex<>();
  /** The same selectors, all filed as cluster-wide: for cluster-scoped inputs, which any parent may select. */
  private final SelectorIndex<ParentKey> clusterWide = new SelectorIndex<>();

  /**
   * @param keysOf every key of a parent (its inputs, and the groups of outputs still there)
   * @param inputOf where an output's input is, from its annotation (or {@code null})
   * @param statusChanged a parent's status counts may have changed
   * @param gone a parent is gone or no longer this controller's
   */
  MapRouter(SyncedResource parents, Function<KubeObject, List<MapKey>> keysOf,
      Function<KubeObject, MapKey.InputRef> inputOf, BiConsumer<MapKey, Trigger> enqueue,
      Consumer<ParentKey> statusChanged,
      Consumer<ParentKey> gone) {
    this.parents = Objects.requireNonNull(parents, "parents");
    this.keysOf = Objects.requireNonNull(keysOf, "keysOf");
    this.inputOf = Objects.requireNonNull(inputOf, "inputOf");
    this.enqueue = Objects.requireNonNull(enqueue, "enqueue");
    this.statusChanged = Objects.requireNonNull(statusChanged, "statusChanged");
    this.gone = Objects.requireNonNull(gone, "gone");
  }

  void onParentEvent(ObjectEvent event) {
    KubeObject parent = event.object();
    ParentKey key = keyOf(parents.resource(), parent);
    if (event.type() == ObjectEvent.Type.DELETED || !parents.responsibleFor(parent)) {
      unfile(key);
      gone.accept(key);
      return;
    }
    if (onlyStatus(event)) {
      return;
    }
    try {
      LabelSelector selector = MapSync.selectorOf(parent, parent.toTree());
      selectors.put(key, key.namespace(), selector);
      clusterWide.put(key, "", selector);
    } catch (IllegalArgumentException e) {
      unfile(key); // its syncs report the problem
    }
    Trigger trigger = event.trigger();
    keysOf.apply(parent).forEach(input -> enqueue.accept(input, trigger));
    statusChanged.accept(key);
  }

  void onInputEvent(ApiResource resource, ObjectEvent event) {
    if (event.isResync()) {
      return; // the parents' own resyncs cover it
    }
    KubeObject input = event.object();
    MapKey.InputRef where = new MapKey.InputRef(resource, input.namespace(), input.name());
    SelectorIndex<ParentKey> index = resource.namespaced() ? selectors : clusterWide;
    Set<ParentKey> owners = new HashSet<>(index.matching(input.namespace(), input.labels()));
    if (event.previous() != null && !event.previous().labels().equals(input.labels())) {
      owners.addAll(index.matching(input.namespace(), event.previous().labels()));
    }
    Trigger trigger = event.triggerAbout(Trigger.Cause.MAP_INPUT, input);
    for (ParentKey owner : owners) {
      enqueue.accept(new MapKey(owner.namespace(), owner.name(), input.storedUid(), where), trigger);
      statusChanged.accept(owner);
    }
  }

  private void unfile(ParentKey key) {
    selectors.remove(key);
    clusterWide.remove(key);
  }

  void onOutputEvent(ObjectEvent event) {
    if (event.isResync()) {
      return;
    }
    event.controllers().forEach(owned -> route(owned.getKey(), owned.getValue(), event));
  }

  private void route(KubeObject output, OwnerRef controller, ObjectEvent event) {
    String mapKey = output.labels().get(MapSync.MAP_KEY_LABEL);
    if (mapKey == null) {
      return;
    }
    parents.controllerOf(output, controller).ifPresent(parent -> {
      ParentKey owner = keyOf(parents.resource(), parent);
      if (onlyStatus(event)) {
        statusChanged.accept(owner);
      } else {
        enqueue.accept(new MapKey(owner.namespace(), owner.name(), mapKey, inputOf.apply(output)),
            event.ownedTrigger(output));
      }
    });
  }

  /**
   * An update of status alone. Only for objects whose generation the API server keeps: a ConfigMap's data edit
   * changes no generation either, and must not pass for a status change.
   */
  private static boolean onlyStatus(ObjectEvent event) {
    return event.changedOnlyStatus() && event.object().generation() > 0;
  }

  static ParentKey keyOf(ApiResource parentResource, KubeObject parent) {
    return new ParentKey(parentResource.namespaced() ? parent.namespace() : "", parent.name());
  }
}
