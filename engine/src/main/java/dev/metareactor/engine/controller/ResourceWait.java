package dev.metareactor.engine.controller;

import dev.metareactor.engine.api.ResourceRule;
import dev.metareactor.engine.discovery.DiscoveredResources;
import dev.metareactor.engine.discovery.ResourceMap;
import dev.metareactor.engine.events.EventRecorder;
import dev.metareactor.engine.kube.ApiResource;
import dev.metareactor.engine.kube.KubeObject;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import org.slf4j.Logger;
import reactor.core.publisher.Mono;

/**
 * A hosted controller's wait before it starts: until discovery serves every resource the controller names (one
 * {@code CreateError} Warning on the controller object says which are missing), and until the kind has no other
 * reason to wait (one Warning {@code SyncError} says it). The controller then starts by itself: nothing has to
 * restart it when a CRD is installed.
 *
 * @param log the controller's logger
 * @param kind the controller object's kind
 * @param name the controller object's name
 * @param controllerObject where the Warnings go
 */
record ResourceWait(Logger log, String kind, String name, KubeObject controllerObject, DiscoveredResources discovery,
    EventRecorder events) {

  ResourceWait {
    Objects.requireNonNull(log, "log");
    Objects.requireNonNull(kind, "kind");
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(controllerObject, "controllerObject");
    Objects.requireNonNull(discovery, "discovery");
    Objects.requireNonNull(events, "events");
  }

  /**
   * The resources {@code rules} name, resolved in the same order, once discovery serves them all and
   * {@code notReady} gives no reason to wait with them.
   *
   * @param waiting told each time discovery shows a reason to wait
   */
  Mono<List<ApiResource>> resolved(List<ResourceRule> rules, Function<List<ApiResource>, Optional<String>> notReady,
      Runnable waiting) {
    AtomicBoolean warnedMissing = new AtomicBoolean();
    AtomicBoolean warnedNotReady = new AtomicBoolean();
    return discovery.snapshots()
        .filter(map -> {
          List<ResourceRule> missing = rules.stream().filter(rule -> lookup(map, rule).isEmpty()).toList();
          if (!missing.isEmpty()) {
            waiting.run();
            if (warnedMissing.compareAndSet(false, true)) {
              reportMissing(missing);
            }
            return false;
          }
          Optional<String> reason = notReady.apply(resolve(map, rules));
          reason.ifPresent(why -> {
            waiting.run();
            if (warnedNotReady.compareAndSet(false, true)) {
              log.warn("{} {} waits: {}", kind, name, why);
              events.record(controllerObject, EventRecorder.Type.Warning, "SyncError", why);
            }
          });
          return reason.isEmpty();
        })
        .next()
        .map(map -> resolve(map, rules));
  }

  private static Optional<ApiResource> lookup(ResourceMap map, ResourceRule rule) {
    return map.byResource(rule.apiVersion(), rule.resource());
  }

  private static List<ApiResource> resolve(ResourceMap map, List<ResourceRule> rules) {
    return rules.stream().map(rule -> lookup(map, rule).orElseThrow()).toList();
  }

  private void reportMissing(List<ResourceRule> missing) {
    ResourceRule first = missing.get(0);
    String message = "discovery: can't find resource " + first.resource() + " in apiVersion " + first.apiVersion()
        + (missing.size() > 1 ? " (and " + (missing.size() - 1) + " more)" : "")
        + "; the controller starts when it is served";
    log.warn("{} {}: {}", kind, name, message);
    events.record(controllerObject, EventRecorder.Type.Warning, "CreateError",
        "Cannot create new controller: " + message);
  }
}
