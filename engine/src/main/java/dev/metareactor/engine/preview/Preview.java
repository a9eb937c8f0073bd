package dev.metareactor.engine.preview;

import dev.metareactor.engine.api.RecordSyncsAnnotation;
import dev.metareactor.engine.api.ShadowAnnotations;
import dev.metareactor.engine.config.EngineOptions;
import dev.metareactor.engine.config.Scheduling;
import dev.metareactor.engine.controller.composite.CompositeController;
import dev.metareactor.engine.controller.decorator.DecoratorController;
import dev.metareactor.engine.controller.map.MapController;
import dev.metareactor.engine.discovery.Discovery;
import dev.metareactor.engine.events.EventRecorder;
import dev.metareactor.engine.host.ControllerContext;
import dev.metareactor.engine.host.ControllerKind;
import dev.metareactor.engine.host.HostedController;
import dev.metareactor.engine.host.OneShot;
import dev.metareactor.engine.informer.SharedInformers;
import dev.metareactor.engine.kube.ApiWriter;
import dev.metareactor.engine.kube.KubeApi;
import dev.metareactor.engine.kube.KubeConfig;
import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.engine.queue.Outcome;
import dev.metareactor.http.HookClient;
import dev.metareactor.http.HookClientOptions;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Comparator;
import java.util.Deque;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntConsumer;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * {@code metareactor preview}: what a controller would write, here and now, without writing anything. It builds
 * what the engine builds for one controller — discovery, informers, the hook client, the controller itself, from
 * the same code — over a {@link PreviewApi} (reads as the engine's, every write a server-side dry run and recorded,
 * Events recorded and never sent), begins it without workers ({@link HostedController#startOneShot}), syncs each
 * chosen parent once through the real sync path and collects, per parent, the writes it would make.
 *
 * <p>The only requests that reach the API server besides reads are the dry runs ({@code dryRun=All}), which the
 * API server validates, defaults and admits and then drops.
 */
public final class Preview {

  /** The kinds a preview can build, by every name a user may give them. */
  private static final List<ControllerKind> KINDS = List.of(CompositeController.kind(), DecoratorController.kind(),
      MapController.kind());
  /** How long stopping the controller may take: its syncs have all ended by then. */
  private static final Duration STOP = Duration.ofSeconds(5);

  /**
   * What to preview.
   *
   * @param kind the controller's kind
   * @param name the name of the controller object to read from the cluster, or {@code null} when {@code object} is
   *     given
   * @param object the controller object as written (a file), or {@code null} to read it by {@code name}
   * @param hookUrl the URL to call instead of the sync hook ({@code map} for a MapController), or {@code null}
   * @param parent {@code namespace/name} (or {@code name} when cluster-scoped) of the one parent to sync, or
   *     {@code null} for every parent
   * @param concurrency how many parents sync at once
   * @param timeout how long to wait for the controller's resources and caches, and each sync for the informers of
   *     its related objects (a customize hook's) to fill theirs
   */
  public record Request(ControllerKind kind, @Nullable String name, @Nullable ObjectNode object,
      @Nullable String hookUrl, @Nullable String parent, int concurrency, Duration timeout) {
    public Request {
      Objects.requireNonNull(kind, "kind");
      if ((name == null) == (object == null)) {
        throw new IllegalArgumentException("give either a controller's name or its object");
      }
      if (concurrency < 1) {
        throw new IllegalArgumentException("--concurrency must be at least 1, got " + concurrency);
      }
      Objects.requireNonNull(timeout, "timeout");
    }
  }

  /**
   * One parent's sync: what it is, how it ended (and why it failed, {@code failure}, {@code null} when it did not),
   * what it would write and which Events it would record.
   */
  public record ParentResult(OneShot.Unit key, @Nullable KubeObject object, Outcome outcome, @Nullable String failure,
      List<PlannedWrite> writes, List<PreviewApi.RecordedEvent> events) {

    /** Whether a write of this parent would change the cluster. */
    public boolean changes() {
      return writes.stream().anyMatch(PlannedWrite::changes);
    }

    /**
     * Whether the sync did not get to the end: it failed (its error is {@link #failure}, and a {@code SyncError}
     * Event among {@link #events} when it was the hook's or a write's), or the hook asked to be called again later
     * (429 or 503 with {@code Retry-After}), so what it would write is not known.
     */
    public boolean failed() {
      return outcome.kind() != Outcome.Kind.SUCCESS;
    }
  }

  /** The preview of one controller. */
  public record Result(String kind, String name, int responsible, List<ParentResult> parents) {}

  private Preview() {
  }

  /** The kind of controller object {@code kindName} names: its kind, resource, or singular, in any case. */
  public static ControllerKind kind(String kindName) {
    String wanted = kindName.toLowerCase(Locale.ROOT);
    return KINDS.stream()
        .filter(kind -> kind.kind().toLowerCase(Locale.ROOT).equals(wanted) || kind.resource().equals(wanted)
            || kind.resource().equals(wanted + "s"))
        .findFirst()
        .orElseThrow(() -> new IllegalArgumentException("unknown controller kind " + kindName
            + ": expected compositecontroller, decoratorcontroller or mapcontroller"));
  }

  /**
   * {@code controller} with its sync hook ({@code map} for a MapController) replaced by a webhook at {@code url}.
   */
  public static ObjectNode withHookUrl(ObjectNode controller, String url) {
    ObjectNode copy = controller.deepCopy();
    String hook = kind(copy.path("kind").asString("")).kind().equals("MapController") ? "map" : "sync";
    JsonNode hooks = copy.path("spec").path("hooks");
    if (!(hooks instanceof ObjectNode hooksObject) || !hooks.has(hook)) {
      throw new IllegalArgumentException("--hook-url: the controller has no spec.hooks." + hook + " to replace");
    }
    JsonNode version = hooks.path(hook).path("version");
    ObjectNode replaced = hooksObject.putObject(hook);
    if (!version.isMissingNode()) {
      replaced.set("version", version);
    }
    replaced.putObject("webhook").put("url", url);
    return copy;
  }

  /**
   * Runs the preview: reports progress ({@code done} parents) to {@code progress} as parents finish.
   *
   * @throws IllegalArgumentException when the controller object is invalid or the parent is not one of its
   * @throws IllegalStateException when its resources or caches are not ready within the timeout
   */
  public static Result run(EngineOptions options, Request request, IntConsumer total, IntConsumer progress) {
    ControllerKind kind = request.kind();
    Deque<AutoCloseable> resources = new ArrayDeque<>();
    try {
      KubeApi kube = new KubeApi(KubeConfig.load(options.kubeconfig()), options.apiConcurrency());
      resources.push(kube);
      // The engine's registry: the controller registers its meters as in the engine.
      PrometheusMeterRegistry meters = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
      resources.push(meters::close);
      Scheduling scheduling = Scheduling.production();
      Discovery discovery = new Discovery(kube, options.discoveryInterval(), scheduling.work());
      resources.push(discovery);
      discovery.refreshed().block(request.timeout());
      if (!discovery.hasSynced()) {
        throw new IllegalStateException("cannot read the API server's discovery at " + kube.config().server());
      }
      SharedInformers informers = new SharedInformers(kube, options.cacheFlushInterval(), scheduling.work(), meters,
          options.ssaFieldManager());
      resources.push(informers);
      PreviewApi api = new PreviewApi(new ApiWriter(kube, options.apiRate(), meters),
          new ApiWriter(kube, options.apiRate(), meters, true));
      HookClient hooks = HookClient.create(
          HookClientOptions.DEFAULTS.withMaxResponseBytes(options.hookMaxResponseSize()), meters);
      resources.push(hooks);
      ObjectNode written = request.object() != null ? request.object() : api.getTree(discovery.current()
              .byResource(kind.apiVersion(), kind.resource())
              .orElseThrow(() -> new IllegalStateException("the API server does not serve " + kind.resource() + "."
                  + kind.apiVersion() + ": are Metacontroller's CRDs installed?")), "",
              Objects.requireNonNull(request.name()))
          .block(request.timeout());
      KubeObject controllerObject = KubeObject.of(withoutSideEffects(request.hookUrl() == null
          ? Objects.requireNonNull(written) : withHookUrl(Objects.requireNonNull(written), request.hookUrl())));
      EventRecorder events = new EventRecorder(api, options.eventRate(), scheduling.wallClock(), "preview");
      HostedController controller = kind.factory().create(controllerObject,
          new ControllerContext(options, discovery, informers, api, events, hooks, meters, scheduling));
      // Every sync has ended when the preview stops it: nothing is left to drain.
      resources.push(() -> controller.stop(STOP).block(request.timeout()));
      OneShot oneShot = controller.startOneShot()
          .timeout(request.timeout(), Mono.error(() -> new IllegalStateException(kind.kind() + " "
              + controllerObject.name() + ": its resources were not served or its caches not filled within "
              + request.timeout().toSeconds() + " s" + pendingEvent(api, controllerObject))))
          .blockOptional()
          .orElseThrow(() -> new IllegalStateException("the controller stopped while starting"));
      List<OneShot.Unit> keys = oneShot.units().stream()
          .sorted(Comparator.comparing(OneShot.Unit::namespace).thenComparing(OneShot.Unit::name)
              .thenComparing(OneShot.Unit::about))
          .toList();
      int responsible = keys.size();
      if (request.parent() != null) {
        keys = keys.stream().filter(key -> named(key).equals(request.parent())).toList();
        if (keys.isEmpty()) {
          throw new IllegalArgumentException(request.parent() + " is not one of the " + responsible + " objects "
              + kind.kind() + " " + controllerObject.name() + " syncs");
        }
      }
      total.accept(keys.size());
      AtomicInteger done = new AtomicInteger();
      List<Synced> synced = Flux.fromIterable(keys)
          // A sync waits, as long as the preview waits for caches, for the related informers it starts itself.
          .flatMapSequential(key -> key.sync(request.timeout())
              .contextWrite(PreviewApi.about(key))
              .map(ended -> new Synced(key, key.object().orElse(null), ended))
              .doOnNext(one -> progress.accept(done.incrementAndGet())), request.concurrency())
          .collectList()
          .block();
      List<PlannedWrite> writes = api.writes();
      List<PreviewApi.RecordedEvent> recorded = api.events();
      List<ParentResult> parents = Objects.requireNonNull(synced).stream()
          .map(one -> new ParentResult(one.key(), one.object(), one.ended().outcome(), one.ended().failure(),
              writes.stream().filter(write -> one.key().equals(write.about())).toList(),
              recorded.stream().filter(event -> event.namespace().equals(one.key().namespace())
                  && event.name().equals(one.key().name())).toList()))
          .toList();
      return new Result(kind.kind(), controllerObject.name(), responsible, parents);
    } finally {
      closeAll(resources);
    }
  }

  private record Synced(OneShot.Unit key, @Nullable KubeObject object, OneShot.Synced ended) {}

  /**
   * {@code controller} without the annotations that would make a preview do more than sync: its shadow hooks (which
   * would be called for every parent) and its recording.
   */
  static ObjectNode withoutSideEffects(ObjectNode controller) {
    ObjectNode copy = controller.deepCopy();
    if (copy.path("metadata").get("annotations") instanceof ObjectNode annotations) {
      for (String key : List.copyOf(annotations.propertyNames())) {
        if (key.startsWith(ShadowAnnotations.PREFIX) || key.equals(RecordSyncsAnnotation.KEY)) {
          annotations.remove(key);
        }
      }
    }
    return copy;
  }

  /** {@code namespace/name}, or {@code name} when cluster-scoped. */
  static String named(OneShot.Unit key) {
    return key.namespace().isEmpty() ? key.name() : key.namespace() + "/" + key.name();
  }

  /** What the controller recorded about itself while starting (a resource not served yet), for the error. */
  private static String pendingEvent(PreviewApi api, KubeObject controller) {
    return api.events().stream()
        .filter(event -> event.name().equals(controller.name()) && event.type().equals("Warning"))
        .map(event -> ": " + event.message())
        .findFirst()
        .orElse("");
  }

  private static void closeAll(Deque<AutoCloseable> resources) {
    while (!resources.isEmpty()) {
      try {
        resources.pop().close();
      } catch (Exception e) {
        // closing what a finished preview used: nothing is left to do about it
      }
    }
  }
}
