package dev.metareactor.engine.faults;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.OwnerReference;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What must hold after every fault, checked the same way each time: the load's parents converged to their latest
 * spec ({@code status.observedGeneration} and {@code status.value}), exactly the desired children (by ControllerRef
 * and name, none twice, none orphaned by us, each with the parent's value), every parent decorated with its value,
 * every input mapped, no {@code SyncError} Event on a parent, the work queues of the load's three controllers empty
 * and the engine ready.
 * {@link #violations} lists what does not hold yet (empty when all do), so a test can wait for it to be empty and
 * show what was left if it never is.
 */
public final class Invariants {

  private final FaultLoad load;
  private final HttpClient http = HttpClient.newHttpClient();
  /** Fragments of SyncError messages that a test's fault causes by design ({@link #excuseSyncErrorsContaining}). */
  private final List<String> excused = new CopyOnWriteArrayList<>();

  public Invariants(FaultLoad load) {
    this.load = load;
  }

  /**
   * From now on, a SyncError whose message contains {@code fragment} is no violation: the fault of the test makes
   * syncs fail so, and their Events stay (they outlive the test in a load its class shares). Only for messages that
   * name the fault itself, never for a SyncError in general.
   */
  public void excuseSyncErrorsContaining(String fragment) {
    excused.add(fragment);
  }

  /** What does not hold yet, one line each; empty when everything does. */
  public List<String> violations(int metricsPort, int healthPort) {
    List<String> problems = new ArrayList<>();
    List<GenericKubernetesResource> parents = load.parentList();
    if (parents.size() != load.parentCount) {
      problems.add(parents.size() + " parents, not " + load.parentCount);
    }
    Map<String, GenericKubernetesResource> byUid = new HashMap<>();
    parents.forEach(parent -> byUid.put(parent.getMetadata().getUid(), parent));
    for (GenericKubernetesResource parent : parents) {
      String name = parent.getMetadata().getName();
      Map<?, ?> status = (Map<?, ?>) parent.getAdditionalProperties().get("status");
      Object observed = status == null ? null : status.get("observedGeneration");
      if (!(observed instanceof Number number) || number.longValue() != parent.getMetadata().getGeneration()) {
        problems.add(name + ": status.observedGeneration " + observed + ", generation "
            + parent.getMetadata().getGeneration());
      } else if (!value(parent).equals(status.get("value"))) {
        problems.add(name + ": status.value " + status.get("value") + ", spec.value " + value(parent));
      }
      Map<String, String> labels = parent.getMetadata().getLabels();
      if (labels == null || !value(parent).equals(labels.get("decorated"))) {
        problems.add(name + ": not decorated with " + value(parent));
      }
    }
    Map<String, List<String>> childrenByParent = new HashMap<>();
    Set<String> inputsMapped = new HashSet<>();
    for (ConfigMap configMap : load.client.configMaps().list().getItems()) {
      String name = configMap.getMetadata().getName();
      List<OwnerReference> controllers = configMap.getMetadata().getOwnerReferences() == null ? List.of()
          : configMap.getMetadata().getOwnerReferences().stream()
              .filter(ref -> Boolean.TRUE.equals(ref.getController())).toList();
      if (name.matches("load-\\d+-\\d+")) {
        if (controllers.size() != 1) {
          problems.add("ConfigMap " + name + ": " + controllers.size() + " controllers");
          continue;
        }
        GenericKubernetesResource parent = byUid.get(controllers.get(0).getUid());
        if (parent == null || !name.startsWith(parent.getMetadata().getName() + "-")) {
          problems.add("ConfigMap " + name + ": controlled by " + controllers.get(0).getName() + ", no such parent");
          continue;
        }
        childrenByParent.computeIfAbsent(parent.getMetadata().getName(), p -> new ArrayList<>()).add(name);
        String data = configMap.getData() == null ? null : configMap.getData().get("value");
        if (!value(parent).equals(data)) {
          problems.add("ConfigMap " + name + ": value " + data + ", parent's " + value(parent));
        }
      } else if (name.matches("input-\\d+-out") && controllers.size() == 1) {
        inputsMapped.add(name.substring(0, name.length() - "-out".length()));
      }
    }
    for (GenericKubernetesResource parent : parents) {
      List<String> children = childrenByParent.getOrDefault(parent.getMetadata().getName(), List.of());
      if (children.size() != FaultLoad.CHILDREN) {
        problems.add(parent.getMetadata().getName() + ": " + children.size() + " children");
      }
    }
    if (inputsMapped.size() != FaultLoad.INPUTS) {
      problems.add(inputsMapped.size() + " of " + FaultLoad.INPUTS + " inputs mapped");
    }
    for (Event event : load.client.v1().events().list().getItems()) {
      if ("SyncError".equals(event.getReason()) && event.getInvolvedObject() != null
          && load.parents.kind().equals(event.getInvolvedObject().getKind())
          && excused.stream().noneMatch(fragment -> String.valueOf(event.getMessage()).contains(fragment))) {
        problems.add("SyncError on " + event.getInvolvedObject().getName() + ": " + event.getMessage());
      }
    }
    try {
      // Only the load's own queues: a test's faulty side controller retries its parents with backoff meanwhile.
      double depth = 0;
      for (String controller : load.controllerNames()) {
        depth += metric(metricsPort, "workqueue_depth", Map.of("controller", controller));
      }
      if (depth != 0) {
        problems.add("workqueue_depth " + depth);
      }
      int ready = readyz(healthPort);
      if (ready != 200) {
        problems.add("/readyz " + ready);
      }
    } catch (Exception e) {
      problems.add("engine unreachable: " + e);
    }
    return problems;
  }

  /** The sum of every series of the engine's metric {@code name} (Prometheus' name). */
  double metric(int metricsPort, String name) throws Exception {
    return metric(metricsPort, name, Map.of());
  }

  /** The sum of the series of {@code name} that carry every one of {@code labels}. */
  double metric(int metricsPort, String name, Map<String, String> labels) throws Exception {
    Pattern series = Pattern.compile("^" + Pattern.quote(name) + "(\\{[^}]*})? ([0-9.eE+-]+)$");
    double sum = 0;
    for (String line : get(metricsPort, "/metrics").body().lines().toList()) {
      Matcher matcher = series.matcher(line);
      if (matcher.matches() && labels.entrySet().stream().allMatch(label -> matcher.group(1) != null
          && matcher.group(1).contains(label.getKey() + "=\"" + label.getValue() + "\""))) {
        sum += Double.parseDouble(matcher.group(2));
      }
    }
    return sum;
  }

  /** The status code of the engine's {@code /readyz}. */
  int readyz(int healthPort) throws Exception {
    return get(healthPort, "/readyz").statusCode();
  }

  /** The children of the load's parents now, name to UID. */
  Map<String, String> childUids() {
    Map<String, String> uids = new HashMap<>();
    for (ConfigMap configMap : load.client.configMaps().list().getItems()) {
      if (configMap.getMetadata().getName().matches("load-\\d+-\\d+")) {
        uids.put(configMap.getMetadata().getName(), configMap.getMetadata().getUid());
      }
    }
    return uids;
  }

  /**
   * The resourceVersion of every object of the load now (parents, the map parent, every ConfigMap of the namespace),
   * by kind and name: two equal snapshots mean that nobody wrote any of them in between.
   */
  Map<String, String> versions() {
    Map<String, String> versions = new TreeMap<>();
    for (GenericKubernetesResource parent : load.parentList()) {
      versions.put("Load " + parent.getMetadata().getName(), parent.getMetadata().getResourceVersion());
    }
    for (GenericKubernetesResource mapper : load.mappers.in(load.client).inNamespace(load.cluster.namespace()).list()
        .getItems()) {
      versions.put("Mapper " + mapper.getMetadata().getName(), mapper.getMetadata().getResourceVersion());
    }
    for (ConfigMap configMap : load.client.configMaps().list().getItems()) {
      versions.put("ConfigMap " + configMap.getMetadata().getName(), configMap.getMetadata().getResourceVersion());
    }
    return versions;
  }

  /**
   * The engine's successful writes so far (creates, updates, patches, deletes) but its Events (which say it started
   * its controllers), from its metrics.
   */
  double writes(int metricsPort) throws Exception {
    return writesByRequest(metricsPort).values().stream().mapToDouble(Double::doubleValue).sum();
  }

  /** {@link #writes} by the labels of its request counter (verb, resource, code), to say which writes they were. */
  Map<String, Double> writesByRequest(int metricsPort) throws Exception {
    Map<String, Double> writes = new HashMap<>();
    Pattern request = Pattern.compile("^metareactor_api_requests_total\\{([^}]*)} ([0-9.eE+-]+)$");
    for (String line : get(metricsPort, "/metrics").body().lines().toList()) {
      Matcher matcher = request.matcher(line);
      if (matcher.matches() && matcher.group(1).contains("code=\"2xx\"")
          && !matcher.group(1).contains("verb=\"get\"") && !matcher.group(1).contains("verb=\"list\"")
          && !matcher.group(1).contains("resource=\"events\"") && Double.parseDouble(matcher.group(2)) > 0) {
        writes.put(matcher.group(1), Double.parseDouble(matcher.group(2)));
      }
    }
    return writes;
  }

  private static String value(GenericKubernetesResource parent) {
    Map<?, ?> spec = (Map<?, ?>) parent.getAdditionalProperties().get("spec");
    return String.valueOf(spec.get("value"));
  }

  private HttpResponse<String> get(int port, String path) throws Exception {
    return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).build(),
        HttpResponse.BodyHandlers.ofString());
  }
}
