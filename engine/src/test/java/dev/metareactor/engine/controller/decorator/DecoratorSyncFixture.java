package dev.metareactor.engine.controller.decorator;

import static dev.metareactor.engine.testing.KubeObjectBuilder.object;

import dev.metareactor.engine.api.DecoratorControllerSpec;
import dev.metareactor.engine.config.ApplyStrategy;
import dev.metareactor.engine.controller.ChildType;
import dev.metareactor.engine.controller.ChildrenManager;
import dev.metareactor.engine.controller.ChosenHook;
import dev.metareactor.engine.controller.Finalizers;
import dev.metareactor.engine.controller.ObjectSync;
import dev.metareactor.engine.controller.ParentEvents;
import dev.metareactor.engine.controller.SyncedResource;
import dev.metareactor.engine.controller.apply.ChildApplier;
import dev.metareactor.engine.controller.decorator.DecoratorRouter.TargetType;
import dev.metareactor.engine.controller.related.RelatedObjects;
import dev.metareactor.engine.hook.HookCaller;
import dev.metareactor.engine.kube.ApiResource;
import dev.metareactor.engine.kube.KubeJson;
import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.engine.testing.FakeInformerLease;
import dev.metareactor.engine.testing.RecordingApi;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.node.ObjectNode;

/**
 * A DecoratorController's sync wired as {@link DecoratorController} wires it, over in-memory fakes (see
 * {@code CompositeSyncFixture}): the DecoratorController {@code tagger} of Services labelled {@code decorate=yes},
 * attaching ConfigMaps; the target {@code team/web} and the attachments in {@link FakeInformerLease}s, every request
 * to a {@link RecordingApi}. Each {@link #sync} wires the real {@link ObjectSync} and {@link DecoratorSync} over these
 * same caches and API.
 */
final class DecoratorSyncFixture {

  static final ApiResource SERVICES = new ApiResource("", "v1", "services", "Service", true, Set.of("status"));
  static final ApiResource CONFIG_MAPS = new ApiResource("", "v1", "configmaps", "ConfigMap", true, Set.of());
  /** The DecoratorController's name, which every attachment's annotation carries. */
  static final String NAME = "tagger";

  final RecordingApi api = new RecordingApi();
  final FakeInformerLease services = new FakeInformerLease(SERVICES);
  final FakeInformerLease configMaps = new FakeInformerLease(CONFIG_MAPS);
  /** The Events the syncs recorded, {@code <object>: <type> <reason> <message>} each. */
  final List<String> events = new CopyOnWriteArrayList<>();

  /** Caches the target {@code team/web} (UID {@code web-uid}): labelled to be decorated, with a status. */
  DecoratorSyncFixture() {
    services.put(KubeObject.of((ObjectNode) KubeJson.mapper().readTree("""
        {"apiVersion": "v1", "kind": "Service",
         "metadata": {"name": "web", "namespace": "team", "uid": "web-uid", "resourceVersion": "3",
                      "labels": {"decorate": "yes", "tier": "front"}, "annotations": {"owner": "ops"}},
         "spec": {}, "status": {"seen": true}}""")));
  }

  /** The target as cached. */
  KubeObject target() {
    return services.get("team", "web").orElseThrow();
  }

  /**
   * The sync, writing attachments by dynamic apply and leaving changed ones as they are ({@code OnDelete}).
   *
   * @param hook answers the sync and finalize requests
   * @param deleteGuard whether the controller carries {@code metareactor.dev/delete-guard: "true"}
   * @param finalize whether it has a finalize hook
   */
  ObjectSync<TargetKey> sync(HookCaller hook, boolean deleteGuard, boolean finalize) {
    return sync(hook, deleteGuard, finalize, ApplyStrategy.DYNAMIC_APPLY, "OnDelete");
  }

  /**
   * @param strategy how attachments are written
   * @param updateMethod the attachments' {@code updateStrategy.method}
   */
  ObjectSync<TargetKey> sync(HookCaller hook, boolean deleteGuard, boolean finalize, ApplyStrategy strategy,
      String updateMethod) {
    return sync(hook, deleteGuard, finalize ? "finalize" : null, strategy, updateMethod);
  }

  /** The sync with a finalize hook that goes by another name in the sync ({@code finalizeName}). */
  ObjectSync<TargetKey> syncFinalizingWith(HookCaller hook, String finalizeName) {
    return sync(hook, false, finalizeName, ApplyStrategy.DYNAMIC_APPLY, "OnDelete");
  }

  /** @param finalizeName the finalize hook's name in the sync, or {@code null} for none */
  private ObjectSync<TargetKey> sync(HookCaller hook, boolean deleteGuard, @Nullable String finalizeName,
      ApplyStrategy strategy, String updateMethod) {
    boolean finalize = finalizeName != null;
    ObjectNode controller = (ObjectNode) KubeJson.mapper().readTree("""
        {"apiVersion": "metacontroller.k8s.io/v1alpha1", "kind": "DecoratorController",
         "metadata": {"name": "%s", "annotations": {"metareactor.dev/delete-guard": "%s"}},
         "spec": {"resources": [{"apiVersion": "v1", "resource": "services",
                                 "labelSelector": {"matchLabels": {"decorate": "yes"}}}],
                  "attachments": [{"apiVersion": "v1", "resource": "configmaps",
                                   "updateStrategy": {"method": "%s"}}],
                  "hooks": {"sync": {"webhook": {"url": "http://hook.invalid/sync"}}%s}}}"""
        .formatted(NAME, deleteGuard, updateMethod,
            finalize ? ", \"finalize\": {\"webhook\": {\"url\": \"http://hook.invalid/f\"}}" : ""));
    DecoratorControllerSpec spec = DecoratorControllerSpec.parse(controller);
    Finalizers finalizers = new Finalizers(spec.finalizerName(), api);
    DecoratorControllerSpec.Target rule = spec.targets().get(0);
    TargetType type = new TargetType(new SyncedResource(SERVICES, services,
        target -> DecoratorRouter.selected(rule, target), finalizers), rule);
    DecoratorSync kind = new DecoratorSync(spec, List.of(type),
        List.of(new ChildType(CONFIG_MAPS, configMaps, spec.attachments().get(0).updateMethod())), api);
    ChosenHook syncHook = new ChosenHook("sync", hook, spec.syncHook().get(), ChosenHook.Purpose.DESIRED_STATE);
    ChosenHook finalizeHook = finalizeName != null
        ? new ChosenHook(finalizeName, hook, spec.finalizeHook().orElseThrow(), ChosenHook.Purpose.FINALIZE) : null;
    ParentEvents recorded = (object, eventType, reason, message) ->
        events.add(object.name() + ": " + eventType + " " + reason + " " + message);
    return new ObjectSync<>(kind, DecoratorSync.SHAPE, "DecoratorController " + NAME, controller,
        new ObjectSync.Hooks(syncHook, finalizeHook),
        new RelatedObjects<>("DecoratorController", NAME, controller, null, Optional.empty(), null,
            (key, trigger) -> {}),
        new ChildrenManager(api, ChildApplier.of(strategy, api, "metacontroller"), recorded),
        finalizers, recorded);
  }

  /** Syncs the target {@code team/web} with {@code sync}, waiting at most five seconds. */
  static Optional<Duration> run(ObjectSync<TargetKey> sync) {
    return sync.sync(new TargetKey(SERVICES, "team", "web")).block(Duration.ofSeconds(5));
  }

  /** Caches an attachment of {@code web} that this decorator made, and returns it. */
  KubeObject attachment(String name) {
    KubeObject attachment = object(CONFIG_MAPS, "team", name).annotation(DecoratorSync.DECORATOR_ANNOTATION, NAME)
        .controlledBy(target()).build();
    configMaps.put(attachment);
    return attachment;
  }
}
