package dev.metareactor.engine.controller.decorator;

import dev.metareactor.engine.api.DecoratorControllerSpec;
import dev.metareactor.engine.api.InvalidControllerException;
import dev.metareactor.engine.api.ResourceRule;
import dev.metareactor.engine.controller.AbstractHostedController;
import dev.metareactor.engine.controller.ChildType;
import dev.metareactor.engine.controller.ObjectSync;
import dev.metareactor.engine.controller.SyncedResource;
import dev.metareactor.engine.controller.Wiring;
import dev.metareactor.engine.controller.decorator.DecoratorRouter.TargetType;
import dev.metareactor.engine.controller.related.RelatedObjects;
import dev.metareactor.engine.host.ControllerContext;
import dev.metareactor.engine.host.ControllerKind;
import dev.metareactor.engine.kube.ApiResource;
import dev.metareactor.engine.kube.KubeObject;
import java.util.ArrayList;
import java.util.List;

/**
 * One hosted DecoratorController: an informer per targeted resource, one per attachment resource, the
 * {@link DecoratorRouter} and the {@link DecoratorSync}. The life around them is
 * {@link AbstractHostedController}'s; targets need no status subresource (status is written to the object when
 * they have none).
 *
 * <p>When its controller object is deleted, the controller retires: it removes its finalizer from every target that
 * still carries it.
 */
public final class DecoratorController extends AbstractHostedController<TargetKey, DecoratorControllerSpec> {

  /** The controller objects' kind. */
  public static final String KIND = DecoratorControllerSpec.KIND;

  /** How the engine hosts DecoratorController objects. */
  public static ControllerKind kind() {
    return new ControllerKind(KIND, "metacontroller.k8s.io/v1alpha1", "decoratorcontrollers",
        "decorator-metacontroller", DecoratorController::new);
  }

  /**
   * Parses and validates a DecoratorController object.
   *
   * @throws InvalidControllerException naming the field that is wrong
   */
  private DecoratorController(KubeObject object, ControllerContext context) {
    super(object, context, DecoratorControllerSpec::parse);
  }

  @Override
  protected List<ResourceRule> resources() {
    List<ResourceRule> rules = new ArrayList<>();
    spec().targets().forEach(target -> rules.add(target.resource()));
    spec().attachments().forEach(attachment -> rules.add(attachment.resource()));
    return rules;
  }

  @Override
  protected ObjectSync<TargetKey> wire(Wiring<TargetKey> wiring, List<ApiResource> resources) {
    List<TargetType> targetTypes = new ArrayList<>();
    for (int i = 0; i < spec().targets().size(); i++) {
      ApiResource resource = resources.get(i);
      DecoratorControllerSpec.Target rule = spec().targets().get(i);
      targetTypes.add(new TargetType(new SyncedResource(resource, wiring.acquireSynced(resource),
          target -> DecoratorRouter.selected(rule, target), wiring.finalizers()), rule));
    }
    List<ChildType> attachmentTypes = wiring.childTypes(spec().attachments(),
        resources.subList(spec().targets().size(), resources.size()));
    RelatedObjects<TargetKey> related = wiring.relatedObjects();
    DecoratorRouter router = new DecoratorRouter(targetTypes, wiring.queue(), related::forget);
    for (TargetType type : targetTypes) {
      wiring.subscribe(type.synced().informer(), "target", event -> router.onTargetEvent(type, event));
    }
    for (ChildType type : attachmentTypes) {
      wiring.subscribe(type.informer(), "attachment", event -> router.onAttachmentEvent(type, event));
    }
    return wiring.objectSync(new DecoratorSync(spec(), targetTypes, attachmentTypes, context().api()),
        DecoratorSync.SHAPE, related);
  }
}
