package dev.metareactor.engine.controller;

import com.github.benmanes.caffeine.cache.Cache;
import dev.metareactor.engine.api.ControllerSpec;
import dev.metareactor.engine.api.HookSpec;
import dev.metareactor.engine.api.InvalidControllerException;
import dev.metareactor.engine.api.ShadowAnnotations;
import dev.metareactor.engine.config.Caches;
import dev.metareactor.engine.events.EventRecorder;
import dev.metareactor.engine.hook.HookCaller;
import dev.metareactor.engine.hook.HookConfig;
import dev.metareactor.engine.hook.SyncResponse;
import dev.metareactor.engine.kube.KubeJson;
import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.http.metrics.MetricCatalogue;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.Semaphore;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Schedulers;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.MissingNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * A shadow hook beside a real one ({@code metareactor.dev/shadow-<hook>-url} on the controller object): every request
 * a real sync sends its hook is sent to the shadow as well, once the real answer has come, without holding the sync
 * up. The shadow's answer is read as the real one was and checked by the same checks ({@link Plan.Answering.CheckedBy}:
 * the desired objects as the API server would take them, the engine's labels, the delete rules), never written, and
 * compared with the real answer: the desired objects by type, namespace and name, the status, the kind's own fields
 * ({@code labels}, {@code annotations}), the Events it asks for, {@code finalized} and {@code resyncAfterSeconds}
 * (numbers by value: {@code 3} and {@code 3.0} are written alike). Two answers that agree on
 * all of them make the same writes from the same observed state; any difference is a write one of them would make
 * and the other not.
 *
 * <p>Each comparison is counted ({@code metareactor_shadow_syncs_total{controller,result}}, the result {@code same},
 * {@code differs}, {@code error} or {@code skipped}); a difference is logged with the first differing object and
 * reported as a Normal {@code ShadowDiffers} Event on the synced object at most once per object and generation. A
 * shadow that is slow or failing costs the real syncs nothing: at most {@code workers} comparisons run at once, a
 * sync whose comparison finds no room is counted as {@code skipped}, and a shadow's failure is counted as
 * {@code error} and logged at debug.
 *
 * <p>A rolling CompositeController writes ControllerRevisions while it answers, so its answers are compared call by
 * call as the hooks gave them, before the checks (which are part of the rollout).
 */
public final class Shadow {

  /** The Event a difference is reported with. */
  public static final String DIFFERS = "ShadowDiffers";
  /** How many objects' last reported generation are remembered (the Event is once per object and generation). */
  private static final int REMEMBERED = 10_000;
  private static final Logger LOG = LoggerFactory.getLogger(Shadow.class);

  /**
   * The shadow hooks the object's annotations name ({@link ShadowAnnotations}), each a webhook of the URL alone with
   * the version and timeout of the hook it stands beside: never the real hook's credentials or TLS material, which
   * are not the shadow's to receive.
   *
   * @throws dev.metareactor.engine.api.InvalidControllerException naming the annotation for a hook the object does
   *     not define, or a URL that is not one
   */
  static Map<String, HookConfig.Webhook> configs(KubeObject object, ControllerSpec spec) {
    Map<String, HookConfig.Webhook> shadows = new LinkedHashMap<>();
    ShadowAnnotations.urls(object.annotations()).forEach((hook, url) -> {
      String field = "metadata.annotations[" + ShadowAnnotations.key(hook) + "]";
      HookSpec real = spec.hooksByName().getOrDefault(hook, Optional.empty()).orElseThrow(() ->
          new InvalidControllerException(field + ": the controller has no " + hook + " hook to shadow"));
      ObjectNode webhook = KubeJson.nodes().objectNode().put("url", url);
      JsonNode timeout = real.webhook().get("timeout");
      if (timeout != null) {
        webhook.set("timeout", timeout);
      }
      shadows.put(hook, HookConfig.webhook(new HookSpec(real.version(), webhook), MissingNode.getInstance(), field));
    });
    return Collections.unmodifiableMap(shadows);
  }

  private final HookCaller caller;
  private final String controller;
  private final ParentEvents events;
  private final Semaphore slots;
  private final Counter same;
  private final Counter differs;
  private final Counter failed;
  private final Counter skipped;
  private final Cache<String, Long> reported = Caches.newBuilder().maximumSize(REMEMBERED).build();

  /** One exchange of a real sync with its hook. */
  public record Exchange(JsonNode request, HookCaller.RootObject root, HookCall.Reply reply) {}

  /**
   * @param caller calls the shadow's URL
   * @param controllerName the controller object's name, the metric's {@code controller} label
   * @param controller {@code <Kind> <name>}, for log lines
   * @param inFlight the most comparisons at once (the controller's workers)
   */
  public Shadow(HookCaller caller, String controllerName, String controller, ParentEvents events, int inFlight,
      MeterRegistry meters) {
    this.caller = Objects.requireNonNull(caller, "caller");
    this.controller = Objects.requireNonNull(controller, "controller");
    this.events = Objects.requireNonNull(events, "events");
    this.slots = new Semaphore(inFlight);
    this.same = counter(meters, controllerName, "same");
    this.differs = counter(meters, controllerName, "differs");
    this.failed = counter(meters, controllerName, "error");
    this.skipped = counter(meters, controllerName, "skipped");
  }

  private static Counter counter(MeterRegistry meters, String controller, String result) {
    return MetricCatalogue.SHADOW_SYNCS.counter().tag("controller", controller).tag("result", result)
        .register(meters);
  }

  /**
   * Starts the comparison of a real sync's answer with the shadow's and returns at once.
   *
   * @param object the synced object
   * @param exchanges the real sync's requests and replies, in order
   * @param parse reads a hook's answer body as the real sync read it
   * @param check the real sync's check of one answer, or {@code null} when its answering writes (a rollout)
   * @param real the real answer, checked
   * @param kindFields the answer fields of the kind's own ({@code labels}, {@code annotations})
   */
  public void compare(KubeObject object, List<Exchange> exchanges, Function<JsonNode, HookCall.Reply> parse,
      Plan.@Nullable Check check, Answer.Checked real, Set<String> kindFields) {
    if (exchanges.isEmpty()) {
      return;
    }
    if (!slots.tryAcquire()) {
      skipped.increment();
      return;
    }
    List<Exchange> made = List.copyOf(exchanges);
    Flux.fromIterable(made)
        .concatMap(exchange -> caller.call(exchange.request(), exchange.root()).map(parse))
        // Off the real sync's thread: a call serializes its request when subscribed.
        .subscribeOn(Schedulers.parallel())
        .collectList()
        .map(shadow -> difference(made, shadow, check, real, kindFields))
        .doFinally(signal -> slots.release())
        .subscribe(difference -> report(object, difference), error -> {
          failed.increment();
          LOG.debug("{}: the shadow hook failed for {}: {}", controller, object.describe(), error.getMessage());
        });
  }

  private void report(KubeObject object, String difference) {
    if (difference.isEmpty()) {
      same.increment();
      return;
    }
    differs.increment();
    Long last = reported.asMap().put(object.storedUid(), object.generation());
    if (last != null && last == object.generation()) {
      LOG.debug("{}: the shadow hook's answer for {} differs: {}", controller, object.describe(), difference);
      return;
    }
    LOG.info("{}: the shadow hook's answer for {} differs: {}", controller, object.describe(), difference);
    events.record(object, EventRecorder.Type.Normal, DIFFERS, "The shadow hook's answer differs: " + difference);
  }

  /**
   * The first difference between the real answers and the shadow's, or {@code ""} when they agree: checked by
   * {@code check} when given (with the real answer as it checked it), else as the hooks gave them
   * ({@code metareactor replay} too).
   *
   * @throws dev.metareactor.engine.hook.HookResponseException when the checks refuse the shadow's answer
   */
  public static String difference(List<Exchange> real, List<HookCall.Reply> shadow, Plan.@Nullable Check check,
      Answer.@Nullable Checked realChecked, Set<String> kindFields) {
    return difference(real, shadow, check, realChecked, kindFields, SHADOW);
  }

  /** The names the two sides of a difference are given: {@code real} and {@code shadow}, or a replay's. */
  public record Sides(String first, String second) {}

  /** A shadow's sides. */
  public static final Sides SHADOW = new Sides("real", "shadow");

  /** The same, the two sides named {@code sides}. */
  public static String difference(List<Exchange> real, List<HookCall.Reply> shadow, Plan.@Nullable Check check,
      Answer.@Nullable Checked realChecked, Set<String> kindFields, Sides sides) {
    if (check != null && realChecked != null && real.size() == 1) {
      HookCall.Reply reply = shadow.get(0);
      Answer checked = check.check(reply.response(), reply.body());
      String objects = firstDifference(byName(realChecked.answer().desired()), byName(checked.desired()), sides);
      return objects.isEmpty() ? answerDifference(real.get(0).reply(), reply, kindFields, sides) : objects;
    }
    for (int i = 0; i < real.size(); i++) {
      HookCall.Reply realReply = real.get(i).reply();
      HookCall.Reply shadowReply = shadow.get(i);
      String objects = firstDifference(byName(realReply.response().children()),
          byName(shadowReply.response().children()), sides);
      String found = objects.isEmpty() ? answerDifference(realReply, shadowReply, kindFields, sides) : objects;
      if (!found.isEmpty()) {
        return real.size() == 1 ? found : "call " + (i + 1) + " of " + real.size() + ": " + found;
      }
    }
    return "";
  }

  /** Status, the kind's own fields, {@code finalized} and {@code resyncAfterSeconds}. */
  private static String answerDifference(HookCall.Reply real, HookCall.Reply shadow, Set<String> kindFields,
      Sides sides) {
    SyncResponse realResponse = real.response();
    SyncResponse shadowResponse = shadow.response();
    String status = path("status", realResponse.status(), shadowResponse.status(), sides);
    if (!status.isEmpty()) {
      return status;
    }
    for (String field : kindFields) {
      String own = path(field, real.body().get(field), shadow.body().get(field), sides);
      if (!own.isEmpty()) {
        return own;
      }
    }
    if (!realResponse.events().equals(shadowResponse.events())) {
      return "events: " + realResponse.events() + " (" + sides.first() + ") vs " + shadowResponse.events() + " ("
          + sides.second() + ")";
    }
    if (realResponse.finalized() != shadowResponse.finalized()) {
      return "finalized: " + realResponse.finalized() + " (" + sides.first() + ") vs " + shadowResponse.finalized()
          + " (" + sides.second() + ")";
    }
    if (!Objects.equals(realResponse.resyncAfter(), shadowResponse.resyncAfter())) {
      return "resyncAfterSeconds: " + realResponse.resyncAfter() + " (" + sides.first() + ") vs "
          + shadowResponse.resyncAfter() + " (" + sides.second() + ")";
    }
    return "";
  }

  private static Map<String, JsonNode> byName(List<?> objects) {
    Map<String, JsonNode> named = new TreeMap<>();
    for (Object each : objects) {
      ObjectNode object = each instanceof DesiredChild child ? child.object() : (ObjectNode) each;
      JsonNode metadata = object.path("metadata");
      String namespace = metadata.path("namespace").asString("");
      named.put(object.path("apiVersion").asString("") + " " + object.path("kind").asString("") + " "
          + (namespace.isEmpty() ? "" : namespace + "/") + metadata.path("name").asString(""), object);
    }
    return named;
  }

  private static String firstDifference(Map<String, JsonNode> real, Map<String, JsonNode> shadow, Sides sides) {
    for (Map.Entry<String, JsonNode> object : real.entrySet()) {
      JsonNode other = shadow.get(object.getKey());
      if (other == null) {
        return object.getKey() + ": in the " + sides.first() + " answer, not in the " + sides.second() + " one";
      }
      String differs = path(object.getKey(), object.getValue(), other, sides);
      if (!differs.isEmpty()) {
        return differs;
      }
    }
    for (String name : shadow.keySet()) {
      if (!real.containsKey(name)) {
        return name + ": in the " + sides.second() + " answer, not in the " + sides.first() + " one";
      }
    }
    return "";
  }

  /** {@code what} at its first differing field: {@code <what> .data.value: "a" (real) vs "b" (shadow)}. */
  private static String path(String what, @Nullable JsonNode real, @Nullable JsonNode shadow, Sides sides) {
    List<String> at = new ArrayList<>();
    JsonNode[] pair = firstDifferent(real, shadow, at);
    if (pair == null) {
      return "";
    }
    return what + (at.isEmpty() ? "" : " ." + String.join(".", at)) + ": " + text(pair[0]) + " (" + sides.first()
        + ") vs " + text(pair[1]) + " (" + sides.second() + ")";
  }

  private static JsonNode @Nullable [] firstDifferent(@Nullable JsonNode real, @Nullable JsonNode shadow,
      List<String> at) {
    if (Objects.equals(real, shadow) || isAbsent(real) && isAbsent(shadow)) {
      return null;
    }
    if (real instanceof ObjectNode realObject && shadow instanceof ObjectNode shadowObject) {
      Set<String> names = new TreeSet<>(realObject.propertyNames());
      names.addAll(shadowObject.propertyNames());
      for (String name : names) {
        at.add(name);
        JsonNode[] found = firstDifferent(realObject.get(name), shadowObject.get(name), at);
        if (found != null) {
          return found;
        }
        at.remove(at.size() - 1);
      }
      return null;
    }
    if (real != null && shadow != null && real.isNumber() && shadow.isNumber()
        && real.decimalValue().compareTo(shadow.decimalValue()) == 0) {
      return null; // 3 and 3.0 are written alike
    }
    return new JsonNode[] {real, shadow};
  }

  private static boolean isAbsent(@Nullable JsonNode node) {
    return node == null || node.isNull() || node.isMissingNode();
  }

  private static String text(@Nullable JsonNode node) {
    if (node == null || isAbsent(node)) {
      return "none";
    }
    String text = node.toString();
    return text.length() > 80 ? text.substring(0, 77) + "..." : text;
  }
}
