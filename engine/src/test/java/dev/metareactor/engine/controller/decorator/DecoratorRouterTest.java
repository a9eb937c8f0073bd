package dev.metareactor.engine.controller.decorator;

import static dev.metareactor.engine.testing.KubeObjectBuilder.nextVersionOf;
import static dev.metareactor.engine.testing.KubeObjectBuilder.object;
import static dev.metareactor.engine.testing.ObjectEvents.added;
import static dev.metareactor.engine.testing.ObjectEvents.deleted;
import static dev.metareactor.engine.testing.ObjectEvents.resync;
import static dev.metareactor.engine.testing.ObjectEvents.updated;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import dev.metareactor.engine.api.DecoratorControllerSpec;
import dev.metareactor.engine.api.UpdateMethod;
import dev.metareactor.engine.controller.ChildType;
import dev.metareactor.engine.controller.Finalizers;
import dev.metareactor.engine.controller.SyncedResource;
import dev.metareactor.engine.controller.decorator.DecoratorRouter.TargetType;
import dev.metareactor.engine.kube.ApiResource;
import dev.metareactor.engine.kube.KubeJson;
import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.engine.queue.Trigger;
import dev.metareactor.engine.testing.FakeInformerLease;
import dev.metareactor.engine.testing.KubeObjectBuilder;
import dev.metareactor.engine.testing.RecordingApi;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * {@link DecoratorRouter} in the unit tier (see {@code CompositeRouterTest}): events handed to it directly, the
 * target caches in memory, the target keys it enqueues and forgets recorded in lists. Two target types, so that
 * routing by kind and rules per resource show: Services decorated when labelled {@code decorate=yes} and annotated
 * {@code team=ops}, status changes ignored; every Deployment, status changes not ignored.
 */
class DecoratorRouterTest {

  private static final ApiResource SERVICES = new ApiResource("", "v1", "services", "Service", true, Set.of("status"));
  private static final ApiResource DEPLOYMENTS =
      new ApiResource("apps", "v1", "deployments", "Deployment", true, Set.of("status"));
  private static final ApiResource CONFIG_MAPS = new ApiResource("", "v1", "configmaps", "ConfigMap", true, Set.of());
  private static final String FINALIZER = "metacontroller.io/decoratorcontroller-tagger";

  private final FakeInformerLease serviceCache = new FakeInformerLease(SERVICES);
  private final FakeInformerLease deploymentCache = new FakeInformerLease(DEPLOYMENTS);
  private final List<TargetKey> enqueued = new ArrayList<>();
  /** The cause of each key in {@link #enqueued}, in the same order. */
  private final List<Trigger> triggers = new ArrayList<>();
  private final List<TargetKey> gone = new ArrayList<>();
  private final TargetType services;
  private final TargetType deployments;
  private final DecoratorRouter router;

  /** The router as {@code DecoratorController} wires it. */
  DecoratorRouterTest() {
    DecoratorControllerSpec spec = DecoratorControllerSpec.parse(KubeJson.mapper().readTree("""
        {"apiVersion": "metacontroller.k8s.io/v1alpha1", "kind": "DecoratorController",
         "metadata": {"name": "tagger"},
         "spec": {"resources": [{"apiVersion": "v1", "resource": "services",
                                 "labelSelector": {"matchLabels": {"decorate": "yes"}},
                                 "annotationSelector": {"matchAnnotations": {"team": "ops"}},
                                 "ignoreStatusChanges": true},
                                {"apiVersion": "apps/v1", "resource": "deployments"}],
                  "attachments": [{"apiVersion": "v1", "resource": "configmaps"}],
                  "hooks": {"sync": {"webhook": {"url": "http://hook.invalid/sync"}}}}}"""));
    assertThat(spec.finalizerName()).isEqualTo(FINALIZER);
    Finalizers finalizers = new Finalizers(FINALIZER, new RecordingApi());
    services = targetType(SERVICES, serviceCache, spec.targets().get(0), finalizers);
    deployments = targetType(DEPLOYMENTS, deploymentCache, spec.targets().get(1), finalizers);
    router = new DecoratorRouter(List.of(services, deployments), (key, trigger) -> {
      enqueued.add(key);
      triggers.add(trigger);
    }, gone::add);
  }

  private static TargetType targetType(ApiResource resource, FakeInformerLease cache,
      DecoratorControllerSpec.Target rule, Finalizers finalizers) {
    return new TargetType(new SyncedResource(resource, cache, target -> DecoratorRouter.selected(rule, target),
        finalizers), rule);
  }

  /** A Service in namespace {@code team} that both of its rule's selectors match. */
  private static KubeObjectBuilder decoratedService(String name) {
    return object(SERVICES, "team", name).label("decorate", "yes").annotation("team", "ops");
  }

  private KubeObject cachedService(KubeObject service) {
    serviceCache.put(service);
    return service;
  }

  private KubeObject cachedDeployment(KubeObject deployment) {
    deploymentCache.put(deployment);
    return deployment;
  }

  private static KubeObjectBuilder attachment(String name) {
    return object(CONFIG_MAPS, "team", name);
  }

  private static TargetKey serviceKey(String name) {
    return new TargetKey(SERVICES, "team", name);
  }

  private static TargetKey deploymentKey(String name) {
    return new TargetKey(DEPLOYMENTS, "team", name);
  }

  // ---- target events

  @Test
  void aTargetBothSelectorsMatchIsEnqueued() {
    router.onTargetEvent(services, added(decoratedService("web").build()));

    assertThat(enqueued).containsExactly(serviceKey("web"));
  }

  @Test
  void aTargetOnlyOneOfItsSelectorsMatchesIsNotEnqueued() {
    router.onTargetEvent(services, added(object(SERVICES, "team", "labelled").label("decorate", "yes").build()));
    router.onTargetEvent(services, added(object(SERVICES, "team", "annotated").annotation("team", "ops").build()));

    assertThat(enqueued).isEmpty();
  }

  @Test
  void aDeselectedTargetStillCarryingTheFinalizerIsEnqueuedToBeFinalized() {
    KubeObject before = decoratedService("web").finalizer(FINALIZER).build();

    router.onTargetEvent(services, updated(before, nextVersionOf(before).annotation("team", "dev").build()));

    assertThat(enqueued).containsExactly(serviceKey("web"));
  }

  @Test
  void withIgnoreStatusChangesAStatusOnlyUpdateIsDropped() {
    KubeObject before = decoratedService("web").build();

    router.onTargetEvent(services, updated(before, nextVersionOf(before).field("status", "{\"ready\": true}").build()));

    assertThat(enqueued).isEmpty();
  }

  @Test
  void withIgnoreStatusChangesAMetadataChangeAndAResyncAreStillEnqueued() {
    KubeObject before = decoratedService("web").build();

    router.onTargetEvent(services, updated(before, nextVersionOf(before).annotation("note", "hi").build()));
    router.onTargetEvent(services, resync(before));

    assertThat(enqueued).containsExactly(serviceKey("web"), serviceKey("web"));
  }

  @Test
  void ignoreStatusChangesIsARuleOfOneTargetResourceOnly() {
    KubeObject before = object(DEPLOYMENTS, "team", "web").build();

    router.onTargetEvent(deployments,
        updated(before, nextVersionOf(before).field("status", "{\"ready\": true}").build()));

    assertThat(enqueued).containsExactly(deploymentKey("web"));
  }

  @Test
  void aDeletedTargetIsForgottenAndEnqueued() {
    router.onTargetEvent(services, deleted(decoratedService("web").build()));

    assertThat(gone).containsExactly(serviceKey("web"));
    // Enqueued too: its sync finds it gone from the cache and does nothing.
    assertThat(enqueued).containsExactly(serviceKey("web"));
  }

  // ---- attachment events

  @Test
  void anAttachmentIsRoutedToTheTargetOfTheKindItsControllerRefNames() {
    // A Service and a Deployment of the same name and UID: only the kind tells which the attachment belongs to.
    cachedService(decoratedService("web").build());
    KubeObject deployment = cachedDeployment(object(DEPLOYMENTS, "team", "web").build());
    assertThat(deployment.uid()).isEqualTo(serviceCache.get("team", "web").orElseThrow().uid());

    router.onAttachmentEvent(added(attachment("web-tags").controlledBy(deployment).build()));

    assertThat(enqueued).containsExactly(deploymentKey("web"));
    assertThat(triggers).as("an attachment added already controlled by its target: the engine's own create")
        .extracting(Trigger::cause).containsExactly(Trigger.Cause.ECHO);
  }

  @Test
  void aDeletedAttachmentEnqueuesItsTarget() {
    KubeObject service = cachedService(decoratedService("web").build());

    // The target's sync must see the attachment gone (and create it again if the hook still wants it).
    router.onAttachmentEvent(deleted(attachment("web-tags").controlledBy(service).build()));

    assertThat(enqueued).containsExactly(serviceKey("web"));
    assertThat(triggers).extracting(Trigger::cause, Trigger::change, Trigger::name)
        .containsExactly(tuple(Trigger.Cause.CHILD, Trigger.Change.DELETED, "web-tags"));
  }

  @Test
  void anAttachmentOfAnEarlierTargetOfTheSameNameIsNotRouted() {
    KubeObject earlier = decoratedService("web").build();
    cachedService(nextVersionOf(earlier).uid("recreated-uid").build());

    router.onAttachmentEvent(added(attachment("web-tags").controlledBy(earlier).build()));

    assertThat(enqueued).isEmpty();
  }

  @Test
  void anAttachmentOfATargetNoLongerDecoratedIsNotRouted() {
    KubeObject service = cachedService(object(SERVICES, "team", "web").label("decorate", "no").build());

    router.onAttachmentEvent(added(attachment("web-tags").controlledBy(service).build()));

    assertThat(enqueued).isEmpty();
  }

  @Test
  void anAttachmentMovedToAnotherTargetEnqueuesBoth() {
    KubeObject from = cachedService(decoratedService("from").build());
    KubeObject to = cachedDeployment(object(DEPLOYMENTS, "team", "to").build());
    KubeObject before = attachment("tags").controlledBy(from).build();

    router.onAttachmentEvent(updated(before, nextVersionOf(before).controlledBy(to).build()));

    assertThat(enqueued).containsExactlyInAnyOrder(serviceKey("from"), deploymentKey("to"));
  }

  @Test
  void aReleasedAttachmentEnqueuesTheTargetItLeft() {
    KubeObject service = cachedService(decoratedService("web").build());
    KubeObject before = attachment("web-tags").controlledBy(service).build();

    router.onAttachmentEvent(updated(before, nextVersionOf(before).controlledBy(null).build()));

    assertThat(enqueued).containsExactly(serviceKey("web"));
  }

  @Test
  void orphanAttachmentsAreNeverAdopted() {
    cachedService(decoratedService("web").build());

    // Even one labelled and annotated like a target: decorators do not adopt.
    router.onAttachmentEvent(added(attachment("web").label("decorate", "yes").annotation("team", "ops").build()));

    assertThat(enqueued).isEmpty();
  }

  @Test
  void attachmentResyncsAreIgnored() {
    KubeObject service = cachedService(decoratedService("web").build());

    router.onAttachmentEvent(resync(attachment("web-tags").controlledBy(service).build()));

    assertThat(enqueued).isEmpty();
  }
  @Test
  void anAttachmentTypeThatIgnoresStatusChangesDropsAStatusOnlyUpdateButNotAChangeOfItsData() {
    KubeObject service = cachedService(decoratedService("web").build());
    ChildType quiet = new ChildType(CONFIG_MAPS, new FakeInformerLease(CONFIG_MAPS), UpdateMethod.IN_PLACE,
        List.of(), true);
    KubeObject before = attachment("web-tags").controlledBy(service).generation(0).build();

    router.onAttachmentEvent(quiet, updated(before, nextVersionOf(before).field("status", "{\"seen\": 1}").build()));
    assertThat(enqueued).as("a change of status alone").isEmpty();

    router.onAttachmentEvent(quiet, updated(before, nextVersionOf(before).field("data", "{\"a\": \"b\"}").build()));
    assertThat(enqueued).as("a change of data, no generation kept").containsExactly(serviceKey("web"));
  }

  @Test
  void anAttachmentTypeThatDoesNotIgnoreStatusChangesRoutesAStatusOnlyUpdate() {
    KubeObject service = cachedService(decoratedService("web").build());
    ChildType plain = new ChildType(CONFIG_MAPS, new FakeInformerLease(CONFIG_MAPS), UpdateMethod.IN_PLACE);
    KubeObject before = attachment("web-tags").controlledBy(service).build();

    router.onAttachmentEvent(plain, updated(before, nextVersionOf(before).field("status", "{\"seen\": 1}").build()));

    assertThat(enqueued).containsExactly(serviceKey("web"));
  }
}
