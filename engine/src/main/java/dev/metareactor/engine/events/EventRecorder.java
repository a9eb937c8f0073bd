package dev.metareactor.engine.events;

import com.github.benmanes.caffeine.cache.Cache;
import dev.metareactor.engine.config.Caches;
import dev.metareactor.engine.config.RateLimit;
import dev.metareactor.engine.kube.ApiException;
import dev.metareactor.engine.kube.ApiResource;
import dev.metareactor.engine.kube.KubeJson;
import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.engine.kube.ObjectApi;
import dev.metareactor.engine.ratelimit.TokenBucket;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.databind.node.ObjectNode;

/**
 * Records Kubernetes Events on the objects the engine works on, the way client-go's recorder does:
 * <ul>
 *   <li>rate-limited per object ({@code --events-qps}, {@code --events-burst}): a parent that fails on every sync
 *       cannot flood the API server; events past the limit are dropped (and logged at debug);</li>
 *   <li>aggregated: the same type, reason and message on the same object again within ten minutes increments
 *       {@code count} on the existing Event instead of creating another;</li>
 *   <li>asynchronous: {@link #record} returns at once; writes go through the engine's rate-limited {@link
 *   ObjectApi}, whose bucket for Events is not the one of its other writes (a storm of Events never delays a
 *   child's write).</li>
 * </ul>
 * Events about cluster-scoped objects go to the {@code default} namespace, as Metacontroller's do.
 */
public final class EventRecorder {

  /** Event types. */
  public enum Type {
    Normal,
    Warning
  }

  /** The core/v1 events resource. */
  public static final ApiResource EVENTS = new ApiResource("", "v1", "events", "Event", true, Set.of());

  private static final Logger LOG = LoggerFactory.getLogger(EventRecorder.class);
  private static final Duration AGGREGATION_WINDOW = Duration.ofMinutes(10);
  private static final String COMPONENT = "metareactor";

  private final ObjectApi api;
  private final RateLimit perObject;
  private final Clock clock;
  private final String instance;
  private final Cache<String, TokenBucket> limits;
  private final Cache<String, Recorded> recent;

  public EventRecorder(ObjectApi api, RateLimit perObject, Clock clock, String instance) {
    this.api = Objects.requireNonNull(api, "api");
    this.perObject = Objects.requireNonNull(perObject, "perObject");
    this.clock = Objects.requireNonNull(clock, "clock");
    this.instance = Objects.requireNonNull(instance, "instance");
    this.limits = Caches.newBuilder().maximumSize(50_000).expireAfterAccess(Duration.ofHours(1)).build();
    this.recent = Caches.newBuilder().maximumSize(50_000).expireAfterWrite(AGGREGATION_WINDOW).build();
  }

  /** Records an event about {@code object}; never blocks and never throws. */
  public void record(KubeObject object, Type type, String reason, String message) {
    record(object, "", type, reason, message);
  }

  /**
   * Records an event about {@code part} of {@code object} (a MapController parent's input), rate-limited apart from
   * the events about its other parts: one input failing again and again must not use up the budget in which the
   * others' first errors are reported.
   *
   * @param part what the event is about within the object; empty for the object as a whole
   */
  public void record(KubeObject object, String part, Type type, String reason, String message) {
    try {
      String objectKey = object.uid() != null ? object.uid()
          : object.apiVersion() + "/" + object.kind() + "/" + object.namespace() + "/" + object.name();
      TokenBucket bucket = limits.get(part.isEmpty() ? objectKey : objectKey + "\u0000" + part,
          key -> new TokenBucket(perObject));
      if (!bucket.reserve().isZero()) {
        // Over the limit: undo nothing (the booked token ages out) and drop, as client-go's spam filter does.
        LOG.debug("dropped event {} {} on {}: over the per-object event rate", type, reason, object.describe());
        return;
      }
      String aggregationKey = objectKey + "\u0000" + type + "\u0000" + reason + "\u0000" + message;
      Recorded previous = recent.getIfPresent(aggregationKey);
      if (previous != null) {
        increment(object, type, reason, message, aggregationKey, previous);
      } else {
        create(object, type, reason, message, aggregationKey);
      }
    } catch (RuntimeException e) {
      LOG.warn("could not record event {} on {}: {}", reason, object.describe(), e.getMessage());
    }
  }

  private void create(KubeObject object, Type type, String reason, String message, String aggregationKey) {
    String namespace = object.namespace().isEmpty() ? "default" : object.namespace();
    String name = object.name() + "." + Long.toHexString(clock.millis()) + Integer.toHexString(
        ThreadLocalRandom.current().nextInt(0x1000));
    String now = timestamp();
    ObjectNode event = KubeJson.nodes().objectNode();
    event.put("apiVersion", "v1");
    event.put("kind", "Event");
    event.putObject("metadata").put("name", name).put("namespace", namespace);
    ObjectNode involved = event.putObject("involvedObject");
    involved.put("apiVersion", object.apiVersion());
    involved.put("kind", object.kind());
    involved.put("name", object.name());
    if (!object.namespace().isEmpty()) {
      involved.put("namespace", object.namespace());
    }
    if (object.uid() != null) {
      involved.put("uid", object.uid());
    }
    if (object.resourceVersion() != null) {
      involved.put("resourceVersion", object.resourceVersion());
    }
    event.put("reason", reason);
    event.put("message", message);
    event.put("type", type.name());
    event.putObject("source").put("component", COMPONENT);
    event.put("reportingComponent", COMPONENT);
    event.put("reportingInstance", instance);
    event.put("firstTimestamp", now);
    event.put("lastTimestamp", now);
    event.put("count", 1);
    recent.put(aggregationKey, new Recorded(namespace, name, 1));
    api.create(EVENTS, event).subscribe(
        created -> LOG.debug("event {} {} on {}: {}", type, reason, object.describe(), message),
        error -> {
          recent.invalidate(aggregationKey);
          LOG.warn("could not create event {} on {}: {}", reason, object.describe(), error.getMessage());
        });
  }

  private void increment(KubeObject object, Type type, String reason, String message, String aggregationKey,
      Recorded previous) {
    int count = previous.count() + 1;
    recent.put(aggregationKey, new Recorded(previous.namespace(), previous.name(), count));
    ObjectNode patch = KubeJson.nodes().objectNode().put("count", count).put("lastTimestamp", timestamp());
    api.mergePatch(EVENTS, previous.namespace(), previous.name(), patch).subscribe(
        patched -> { },
        error -> {
          recent.invalidate(aggregationKey);
          if (ApiException.codeOf(error) == 404) {
            create(object, type, reason, message, aggregationKey); // expired on the server: start a new one
          } else {
            LOG.warn("could not update event {} on {}: {}", reason, object.describe(), error.getMessage());
          }
        });
  }

  private String timestamp() {
    return Instant.now(clock).truncatedTo(ChronoUnit.SECONDS).toString();
  }

  private record Recorded(String namespace, String name, int count) {}
}
