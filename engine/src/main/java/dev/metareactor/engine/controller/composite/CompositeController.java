package dev.metareactor.engine.controller.composite;

import dev.metareactor.engine.api.ChildResourceRule;
import dev.metareactor.engine.api.CompositeControllerSpec;
import dev.metareactor.engine.api.InvalidControllerException;
import dev.metareactor.engine.api.ResourceRule;
import dev.metareactor.engine.controller.AbstractHostedController;
import dev.metareactor.engine.controller.ChildClaimer;
import dev.metareactor.engine.controller.ChildType;
import dev.metareactor.engine.controller.ChildrenManager;
import dev.metareactor.engine.controller.ParentKey;
import dev.metareactor.engine.controller.related.RelatedObjects;
import dev.metareactor.engine.discovery.ApiResource;
import dev.metareactor.engine.host.ControllerContext;
import dev.metareactor.engine.host.ControllerKind;
import dev.metareactor.engine.informer.InformerLease;
import dev.metareactor.engine.kube.KubeObject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import reactor.core.publisher.Mono;
import tools.jackson.databind.node.ObjectNode;

/**
 * One hosted CompositeController: the parent and child informers, the {@link CompositeRouter} that turns their
 * events into parent keys, and the {@link CompositeSync} each worker runs. The life around them (waiting for the
 * resources, the queue, outcomes and Events, stopping and retiring) is {@link AbstractHostedController}'s.
 *
 * <p>The parent resource must have the status subresource, as upstream requires: without it the controller does
 * not start, records upstream's Warning ({@code ... does not have subresource 'Status' enabled}) once, and starts
 * by itself if the subresource appears. Built-in resources with a status subresource work as parents too.
 *
 * <p>When its controller object is deleted, the controller retires: after its last sync it removes its finalizer
 * from every parent that still carries it (upstream leaves them behind, and such parents can then never be
 * deleted).
 */
public final class CompositeController extends AbstractHostedController<ParentKey> {

  /** The controller objects' kind. */
  public static final String KIND = "CompositeController";

  /** How the engine hosts CompositeController objects. */
  public static ControllerKind kind() {
    return new ControllerKind(KIND, "metacontroller.k8s.io/v1alpha1", "compositecontrollers",
        "composite-metacontroller", CompositeController::create);
  }

  private final CompositeControllerSpec spec;

  /** Set by {@link #wire}, read by syncs and timers after it. */
  private volatile InformerLease parents;
  private volatile CompositeRouter router;
  private volatile CompositeSync sync;

  private CompositeController(KubeObject object, ObjectNode json, CompositeControllerSpec spec,
      ControllerContext context) {
    super(KIND, spec.name(), object, json, context, spec.finalizerName(),
        new Hooks(spec.syncHook(), spec.finalizeHook(), spec.customizeHook()), spec.endpointConfigs());
    this.spec = spec;
  }

  /**
   * Parses and validates a CompositeController object.
   *
   * @throws InvalidControllerException naming the field that is wrong
   */
  static CompositeController create(KubeObject object, ControllerContext context) {
    ObjectNode json = object.toTree();
    return new CompositeController(object, json, CompositeControllerSpec.parse(json), context);
  }

  @Override
  protected List<ResourceRule> resources() {
    List<ResourceRule> rules = new ArrayList<>();
    rules.add(spec.parent());
    spec.children().forEach(child -> rules.add(child.resource()));
    return rules;
  }

  @Override
  protected Optional<String> notReady(List<ApiResource> resources) {
    ApiResource parent = resources.get(0);
    if (parent.hasStatusSubresource()) {
      return Optional.empty();
    }
    String crd = parent.group().isEmpty() ? parent.resource() : parent.resource() + "." + parent.group();
    return Optional.of("[" + name() + "] Sync error - ignoring, CRD [" + crd + "] does not have subresource "
        + "'Status' enabled");
  }

  @Override
  protected void wire(List<ApiResource> resources) {
    ApiResource parentResource = resources.get(0);
    InformerLease parentInformer = acquire(parentResource);
    List<ChildType> childTypes = new ArrayList<>();
    for (int i = 0; i < spec.children().size(); i++) {
      ChildResourceRule rule = spec.children().get(i);
      ApiResource resource = resources.get(i + 1);
      childTypes.add(new ChildType(resource, acquire(resource), rule.updateMethod()));
    }
    RelatedObjects<ParentKey> related = relatedObjects();
    CompositeRouter compositeRouter = new CompositeRouter(spec, parentResource, parentInformer, this::enqueue,
        related::forget);
    sync = new CompositeSync(spec, controllerJson(), parentResource, parentInformer, childTypes,
        new CompositeSync.Hooks(hook("sync"), hook("finalize")),
        new ChildClaimer(context().api()), related, new ChildrenManager(context().api()), finalizers(),
        context().api(), compositeRouter::responsibleFor);
    parents = parentInformer;
    router = compositeRouter;
    subscribe(parentInformer, "parent", compositeRouter::onParentEvent);
    for (ChildType type : childTypes) {
      subscribe(type.informer(), "child", compositeRouter::onChildEvent);
    }
  }

  @Override
  protected Mono<Optional<Duration>> sync(ParentKey key) {
    return sync.sync(key);
  }

  @Override
  protected Optional<KubeObject> objectOf(ParentKey key) {
    return parents.get(key.namespace(), key.name());
  }

  @Override
  protected int resyncPeriodSeconds() {
    return spec.resyncPeriodSeconds();
  }

  @Override
  protected void resyncAll() {
    for (KubeObject parent : parents.list()) {
      if (router.responsibleFor(parent)) {
        enqueue(router.keyOf(parent));
      }
    }
  }

  @Override
  protected List<FinalizedObject> objectsWithFinalizer() {
    return parents.list().stream().filter(finalizers()::presentOn)
        .map(parent -> new FinalizedObject(parents.resource(), parent)).toList();
  }
}
