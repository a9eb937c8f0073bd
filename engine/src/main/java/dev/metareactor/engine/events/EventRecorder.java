package dev.metareactor.engine.events;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import dev.metareactor.engine.config.RateLimit;
import dev.metareactor.engine.discovery.ApiResource;
import dev.metareactor.engine.kube.ApiWriter;
import dev.metareactor.engine.kube.TokenBucket;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Records Kubernetes Events on the objects the engine works on, the way client-go's recorder does:
 * <ul>
 *   <li>rate-limited per object ({@code --events-qps}, {@code --events-burst}): a parent that fails on every sync
 *       cannot flood the API server; events past the limit are dropped (and logged at debug);</li>
 *   <li>aggregated: the same type, reason and message on the same object again within ten minutes increments
 *       {@code count} on the existing Event instead of creating another;</li>
 *   <li>asynchronous: {@link #record} returns at once; writes go through the rate-limited {@link ApiWriter}.</li>
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

  private final ApiWriter api;
  private final RateLimit perObject;
  private final Clock clock;
  private final String instance;
  private final Cache<String, TokenBucket> limits;
  private final Cache<String, Recorded> recent;

  public EventRecorder(ApiWriter api, RateLimit perObject, Clock clock, String instance) {
    this.api = Objects.requireNonNull(api, "api");
    this.perObject = Objects.requireNonNull(perObject, "perObject");
    this.clock = Objects.requireNonNull(clock, "clock");
    this.instance = Objects.requireNonNull(instance, "instance");
    this.limits = Caffeine.newBuilder().maximumSize(50_000).expireAfterAccess(Duration.ofHours(1)).build();
    this.recent = Caffeine.newBuilder().maximumSize(50_000).expireAfterWrite(AGGREGATION_WINDOW).build();
  }

  /** Records an event about {@code object}; never blocks and never throws. */
  public void record(HasMetadata object, Type type, String reason, String message) {
    try {
      ObjectMeta meta = object.getMetadata();
      String objectKey = meta.getUid() != null ? meta.getUid()
          : object.getApiVersion() + "/" + object.getKind() + "/" + meta.getNamespace() + "/" + meta.getName();
      TokenBucket bucket = limits.get(objectKey, key -> new TokenBucket(perObject));
      if (!bucket.reserve().isZero()) {
        // Over the limit: undo nothing (the booked token ages out) and drop, as client-go's spam filter does.
        LOG.debug("dropped event {} {} on {}: over the per-object event rate", type, reason, describe(object));
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
      LOG.warn("could not record event {} on {}: {}", reason, describe(object), e.getMessage());
    }
  }

  private void create(HasMetadata object, Type type, String reason, String message, String aggregationKey) {
    ObjectMeta meta = object.getMetadata();
    String namespace = meta.getNamespace() == null || meta.getNamespace().isEmpty() ? "default" : meta.getNamespace();
    String name = meta.getName() + "." + Long.toHexString(clock.millis()) + Integer.toHexString(
        ThreadLocalRandom.current().nextInt(0x1000));
    String now = timestamp();
    Map<String, Object> involved = new LinkedHashMap<>();
    involved.put("apiVersion", object.getApiVersion());
    involved.put("kind", object.getKind());
    involved.put("name", meta.getName());
    if (meta.getNamespace() != null && !meta.getNamespace().isEmpty()) {
      involved.put("namespace", meta.getNamespace());
    }
    if (meta.getUid() != null) {
      involved.put("uid", meta.getUid());
    }
    if (meta.getResourceVersion() != null) {
      involved.put("resourceVersion", meta.getResourceVersion());
    }
    GenericKubernetesResource event = new GenericKubernetesResource();
    event.setApiVersion("v1");
    event.setKind("Event");
    event.setMetadata(new ObjectMetaBuilder().withName(name).withNamespace(namespace).build());
    event.setAdditionalProperty("involvedObject", involved);
    event.setAdditionalProperty("reason", reason);
    event.setAdditionalProperty("message", message);
    event.setAdditionalProperty("type", type.name());
    event.setAdditionalProperty("source", Map.of("component", COMPONENT));
    event.setAdditionalProperty("reportingComponent", COMPONENT);
    event.setAdditionalProperty("reportingInstance", instance);
    event.setAdditionalProperty("firstTimestamp", now);
    event.setAdditionalProperty("lastTimestamp", now);
    event.setAdditionalProperty("count", 1);
    recent.put(aggregationKey, new Recorded(namespace, name, 1));
    api.create(EVENTS, event).subscribe(
        created -> LOG.debug("event {} {} on {}: {}", type, reason, describe(object), message),
        error -> {
          recent.invalidate(aggregationKey);
          LOG.warn("could not create event {} on {}: {}", reason, describe(object), error.getMessage());
        });
  }

  private void increment(HasMetadata object, Type type, String reason, String message, String aggregationKey,
      Recorded previous) {
    int count = previous.count() + 1;
    recent.put(aggregationKey, new Recorded(previous.namespace(), previous.name(), count));
    String patch = "{\"count\":" + count + ",\"lastTimestamp\":\"" + timestamp() + "\"}";
    api.mergePatch(EVENTS, previous.namespace(), previous.name(), patch).subscribe(
        patched -> { },
        error -> {
          recent.invalidate(aggregationKey);
          if (error instanceof KubernetesClientException e && e.getCode() == 404) {
            create(object, type, reason, message, aggregationKey); // expired on the server: start a new one
          } else {
            LOG.warn("could not update event {} on {}: {}", reason, describe(object), error.getMessage());
          }
        });
  }

  private String timestamp() {
    return Instant.now(clock).truncatedTo(ChronoUnit.SECONDS).toString();
  }

  private static String describe(HasMetadata object) {
    ObjectMeta meta = object.getMetadata();
    return object.getKind() + " " + (meta.getNamespace() == null ? "" : meta.getNamespace() + "/") + meta.getName();
  }

  private record Recorded(String namespace, String name, int count) {}
}
