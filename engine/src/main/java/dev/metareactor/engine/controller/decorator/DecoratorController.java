package dev.metareactor.engine.controller.decorator;

import dev.metareactor.engine.api.ChildResourceRule;
import dev.metareactor.engine.api.DecoratorControllerSpec;
import dev.metareactor.engine.api.InvalidControllerException;
import dev.metareactor.engine.api.ResourceRule;
import dev.metareactor.engine.controller.AbstractHostedController;
import dev.metareactor.engine.controller.ChildType;
import dev.metareactor.engine.controller.ChildrenManager;
import dev.metareactor.engine.controller.decorator.DecoratorRouter.TargetType;
import dev.metareactor.engine.controller.related.RelatedObjects;
import dev.metareactor.engine.discovery.ApiResource;
import dev.metareactor.engine.host.ControllerContext;
import dev.metareactor.engine.host.ControllerKind;
import dev.metareactor.engine.kube.KubeObject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import reactor.core.publisher.Mono;
import tools.jackson.databind.node.ObjectNode;

/**
 * One hosted DecoratorController: an informer per targeted resource, one per attachment resource, the
 * {@link DecoratorRouter} and the {@link DecoratorSync}. The life around them is
 * {@link AbstractHostedController}'s; targets need no status subresource (status is written to the object when
 * they have none).
 *
 * <p>When its controller object is deleted, the controller retires: it removes its finalizer from every target that
 * still carries it.
 */
public final class DecoratorController extends AbstractHostedController<TargetKey> {

  /** The controller objects' kind. */
  public static final String KIND = "DecoratorController";

  /** How the engine hosts DecoratorController objects. */
  public static ControllerKind kind() {
    return new ControllerKind(KIND, "metacontroller.k8s.io/v1alpha1", "decoratorcontrollers",
        "decorator-metacontroller", DecoratorController::create);
  }

  private final DecoratorControllerSpec spec;

  /** Set by {@link #wire}, read by syncs and timers after it. */
  private volatile List<TargetType> targets = List.of();
  private volatile DecoratorRouter router;
  private volatile DecoratorSync sync;

  private DecoratorController(KubeObject object, ObjectNode json, DecoratorControllerSpec spec,
      ControllerContext context) {
    super(KIND, spec.name(), object, json, context, spec.finalizerName(),
        new Hooks(spec.syncHook(), spec.finalizeHook(), spec.customizeHook()), spec.endpointConfigs());
    this.spec = spec;
  }

  /**
   * Parses and validates a DecoratorController object.
   *
   * @throws InvalidControllerException naming the field that is wrong
   */
  static DecoratorController create(KubeObject object, ControllerContext context) {
    ObjectNode json = object.toTree();
    return new DecoratorController(object, json, DecoratorControllerSpec.parse(json), context);
  }

  @Override
  protected List<ResourceRule> resources() {
    List<ResourceRule> rules = new ArrayList<>();
    spec.targets().forEach(target -> rules.add(target.resource()));
    spec.attachments().forEach(attachment -> rules.add(attachment.resource()));
    return rules;
  }

  @Override
  protected void wire(List<ApiResource> resources) {
    List<TargetType> targetTypes = new ArrayList<>();
    for (int i = 0; i < spec.targets().size(); i++) {
      ApiResource resource = resources.get(i);
      targetTypes.add(new TargetType(resource, spec.targets().get(i), acquire(resource)));
    }
    List<ChildType> attachmentTypes = new ArrayList<>();
    for (int i = 0; i < spec.attachments().size(); i++) {
      ChildResourceRule rule = spec.attachments().get(i);
      ApiResource resource = resources.get(spec.targets().size() + i);
      attachmentTypes.add(new ChildType(resource, acquire(resource), rule.updateMethod()));
    }
    RelatedObjects<TargetKey> related = relatedObjects();
    DecoratorRouter decoratorRouter = new DecoratorRouter(targetTypes, spec.finalizerName(), this::enqueue,
        related::forget);
    sync = new DecoratorSync(spec, controllerJson(), targetTypes, attachmentTypes,
        new DecoratorSync.Hooks(hook("sync"), hook("finalize")), related,
        new ChildrenManager(context().api()), finalizers(), context().api(),
        decoratorRouter);
    targets = List.copyOf(targetTypes);
    router = decoratorRouter;
    for (TargetType type : targetTypes) {
      subscribe(type.informer(), "target", event -> decoratorRouter.onTargetEvent(type, event));
    }
    for (ChildType type : attachmentTypes) {
      subscribe(type.informer(), "attachment", decoratorRouter::onAttachmentEvent);
    }
  }

  @Override
  protected Mono<Optional<Duration>> sync(TargetKey key) {
    return sync.sync(key);
  }

  @Override
  protected Optional<KubeObject> objectOf(TargetKey key) {
    return targets.stream().filter(type -> type.resource().equals(key.resource())).findFirst()
        .flatMap(type -> type.informer().get(key.namespace(), key.name()));
  }

  @Override
  protected int resyncPeriodSeconds() {
    return spec.resyncPeriodSeconds();
  }

  @Override
  protected void resyncAll() {
    for (TargetType type : targets) {
      for (KubeObject target : type.informer().list()) {
        if (router.responsibleFor(type, target)) {
          enqueue(DecoratorRouter.keyOf(type.resource(), target));
        }
      }
    }
  }

  @Override
  protected List<FinalizedObject> objectsWithFinalizer() {
    List<FinalizedObject> objects = new ArrayList<>();
    for (TargetType type : targets) {
      type.informer().list().stream().filter(finalizers()::presentOn)
          .forEach(target -> objects.add(new FinalizedObject(type.resource(), target)));
    }
    return objects;
  }
}
