package dev.metareactor.engine.controller.composite;

import dev.metareactor.engine.api.ChildResourceRule;
import dev.metareactor.engine.api.CompositeControllerSpec;
import dev.metareactor.engine.api.CrossNamespaceChildren;
import dev.metareactor.engine.api.DeleteParentAnnotation;
import dev.metareactor.engine.api.InvalidControllerException;
import dev.metareactor.engine.api.ResourceRule;
import dev.metareactor.engine.api.UpdateMethod;
import dev.metareactor.engine.controller.AbstractHostedController;
import dev.metareactor.engine.controller.ChildClaimer;
import dev.metareactor.engine.controller.ChildType;
import dev.metareactor.engine.controller.ObjectSync;
import dev.metareactor.engine.controller.ParentKey;
import dev.metareactor.engine.controller.SyncedResource;
import dev.metareactor.engine.controller.Wiring;
import dev.metareactor.engine.controller.related.RelatedObjects;
import dev.metareactor.engine.controller.rolling.RollingUpdate;
import dev.metareactor.engine.controller.rolling.Rollout;
import dev.metareactor.engine.host.ControllerContext;
import dev.metareactor.engine.host.ControllerKind;
import dev.metareactor.engine.kube.ApiResource;
import dev.metareactor.engine.kube.KubeObject;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

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
public final class CompositeController extends AbstractHostedController<ParentKey, CompositeControllerSpec> {

  /** The controller objects' kind. */
  public static final String KIND = CompositeControllerSpec.KIND;

  /** Whether sync answers may delete their parent ({@link DeleteParentAnnotation}). */
  private final boolean deleteParentAllowed;
  /** Where, beside its own namespace, a parent's children may be ({@link CrossNamespaceChildren}). */
  private final CrossNamespaceChildren crossNamespace;

  /** How the engine hosts CompositeController objects. */
  public static ControllerKind kind() {
    return new ControllerKind(KIND, "metacontroller.k8s.io/v1alpha1", "compositecontrollers",
        "composite-metacontroller", CompositeController::new);
  }

  /**
   * Parses and validates a CompositeController object.
   *
   * @throws InvalidControllerException naming the field that is wrong
   */
  private CompositeController(KubeObject object, ControllerContext context) {
    super(object, context, CompositeControllerSpec::parse);
    this.deleteParentAllowed = DeleteParentAnnotation.allowed(object.annotations());
    this.crossNamespace = CrossNamespaceChildren.of(object.annotations());
  }

  @Override
  protected List<ResourceRule> resources() {
    List<ResourceRule> rules = new ArrayList<>();
    rules.add(spec().parent());
    spec().children().forEach(child -> rules.add(child.resource()));
    if (rolling()) {
      rules.add(new ResourceRule(RollingUpdate.REVISIONS_API_VERSION, RollingUpdate.REVISIONS_RESOURCE));
    }
    return rules;
  }

  /** Whether a child rule rolls: then the controller keeps ControllerRevisions of its parents. */
  private boolean rolling() {
    return spec().children().stream().anyMatch(child -> child.updateMethod().rolling());
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
  protected ObjectSync<ParentKey> wire(Wiring<ParentKey> wiring, List<ApiResource> resources) {
    SyncedResource parents = new SyncedResource(resources.get(0), wiring.acquireSynced(resources.get(0)),
        parent -> spec().parentSelector().matches(parent.labels()), wiring.finalizers());
    int childCount = spec().children().size();
    List<ChildType> childTypes = wiring.childTypes(spec().children(), resources.subList(1, 1 + childCount));
    ChildClaimer claimer = new ChildClaimer(context().api());
    RollingUpdate rollingUpdate = rolling() ? rollingUpdate(wiring, parents.resource(), childTypes,
        resources.get(1 + childCount), claimer) : null;
    RelatedObjects<ParentKey> related = wiring.relatedObjects();
    CompositeRouter router = new CompositeRouter(spec(), parents, wiring.queue(), related::forget,
        crossNamespace.enabled());
    wiring.subscribe(parents.informer(), "parent", router::onParentEvent);
    for (ChildType type : childTypes) {
      wiring.subscribe(type.informer(), "child", event -> router.onChildEvent(type, event));
    }
    return wiring.objectSync(new CompositeSync(spec(), parents, childTypes, claimer, context().api(), rollingUpdate,
        context().events()::record, deleteParentAllowed, crossNamespace), CompositeSync.SHAPE, related);
  }

  /** The rollout of the rolling child types, with the ControllerRevision informer taken. */
  private RollingUpdate rollingUpdate(Wiring<ParentKey> wiring, ApiResource parent, List<ChildType> childTypes,
      ApiResource revisionResource, ChildClaimer claimer) {
    List<Rollout.Rule> rules = new ArrayList<>();
    for (int i = 0; i < childTypes.size(); i++) {
      ChildResourceRule rule = spec().children().get(i);
      if (rule.updateMethod().rolling()) {
        ApiResource type = childTypes.get(i).resource();
        rules.add(new Rollout.Rule(type.group(), type.kind(), rule.updateMethod(), rule.statusChecks()));
      }
    }
    ChildType revisions = new ChildType(revisionResource, wiring.acquireOwned(revisionResource),
        UpdateMethod.ON_DELETE);
    return new RollingUpdate(parent, spec().revisionFieldPaths(), spec().generateSelector(), rules, revisions,
        claimer, context().api(), wiring.applier(), wiring.ownLabels(), wiring.workers());
  }
}
