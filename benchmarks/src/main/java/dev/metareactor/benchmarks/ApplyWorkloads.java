package dev.metareactor.benchmarks;

import dev.metareactor.apply.DynamicApply;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.JsonNodeFactory;
import tools.jackson.databind.node.ObjectNode;

/**
 * Deterministic, realistic inputs for {@link ApplyBenchmark}: for each workload, the object a hook returns
 * ({@code desired}), the same object with one field changed, and the live object the engine observes (the
 * desired object as created, plus what the API server and other writers add: system metadata, defaults,
 * status, a foreign sidecar or annotation).
 */
final class ApplyWorkloads {

  private static final JsonNodeFactory F = JsonNodeFactory.instance;

  /** One workload: desired, desired with one field changed, and observed (steady state for {@code desired}). */
  record Workload(ObjectNode desired, ObjectNode changed, ObjectNode observed) {}

  private ApplyWorkloads() {}

  static Workload named(String name) {
    return switch (name) {
      case "pod" -> pod();
      case "deployment" -> deployment();
      case "configmap200" -> configMap();
      case "cr1000" -> customResource();
      default -> throw new IllegalArgumentException("unknown workload " + name);
    };
  }

  /** A Pod with three containers, each with ports, env and volume mounts, and two volumes. */
  static Workload pod() {
    ObjectNode desired = object("v1", "Pod", "web-0");
    ((ObjectNode) desired.get("metadata")).putObject("labels").put("app", "web").put("tier", "frontend");
    ObjectNode spec = desired.putObject("spec");
    fillPodSpec(spec);
    ObjectNode changed = desired.deepCopy();
    ((ObjectNode) changed.at("/spec/containers/0")).put("image", "registry.example.com/web:1.28.1");

    ObjectNode observed = live(desired);
    ObjectNode liveSpec = (ObjectNode) observed.get("spec");
    defaultPodSpec(liveSpec);
    observed.putObject("status").put("phase", "Running").put("podIP", "10.244.1.17").put("qosClass", "Burstable");
    return new Workload(desired, changed, observed);
  }

  /** A Deployment with a two-container pod template. */
  static Workload deployment() {
    ObjectNode desired = object("apps/v1", "Deployment", "web");
    ((ObjectNode) desired.get("metadata")).putObject("labels").put("app", "web");
    ObjectNode spec = desired.putObject("spec");
    spec.put("replicas", 3);
    spec.putObject("selector").putObject("matchLabels").put("app", "web");
    ObjectNode template = spec.putObject("template");
    template.putObject("metadata").putObject("labels").put("app", "web");
    fillPodSpec(template.putObject("spec"));
    ObjectNode changed = desired.deepCopy();
    ((ObjectNode) changed.get("spec")).put("replicas", 4);

    ObjectNode observed = live(desired);
    ObjectNode liveSpec = (ObjectNode) observed.get("spec");
    liveSpec.put("progressDeadlineSeconds", 600).put("revisionHistoryLimit", 10);
    liveSpec.putObject("strategy").put("type", "RollingUpdate").putObject("rollingUpdate")
        .put("maxSurge", "25%").put("maxUnavailable", "25%");
    defaultPodSpec((ObjectNode) liveSpec.at("/template/spec"));
    observed.putObject("status").put("observedGeneration", 3).put("replicas", 3).put("readyReplicas", 3);
    return new Workload(desired, changed, observed);
  }

  /** A ConfigMap with 200 keys of 64-character values. */
  static Workload configMap() {
    ObjectNode desired = object("v1", "ConfigMap", "settings");
    ObjectNode data = desired.putObject("data");
    for (int i = 0; i < 200; i++) {
      data.put(String.format("setting.%03d", i), "value-" + i + "-" + "x".repeat(56 - Integer.toString(i).length()));
    }
    ObjectNode changed = desired.deepCopy();
    ((ObjectNode) changed.get("data")).put("setting.100", "changed");
    return new Workload(desired, changed, live(desired));
  }

  /** A custom resource whose spec holds a 1,000-item associative list keyed by {@code name}. */
  static Workload customResource() {
    ObjectNode desired = object("example.com/v1", "Fleet", "fleet-a");
    ArrayNode members = desired.putObject("spec").put("region", "eu-west").putArray("members");
    for (int i = 0; i < 1000; i++) {
      members.addObject().put("name", "member-" + i).put("weight", i % 7).put("zone", "zone-" + (i % 3));
    }
    ObjectNode changed = desired.deepCopy();
    ((ObjectNode) changed.at("/spec/members/500")).put("weight", 99);

    ObjectNode observed = live(desired);
    for (var member : observed.at("/spec/members")) {
      ((ObjectNode) member).put("state", "Active"); // written by another controller
    }
    observed.putObject("status").put("observedGeneration", 1).put("members", 1000);
    return new Workload(desired, changed, observed);
  }

  private static void fillPodSpec(ObjectNode spec) {
    ArrayNode containers = spec.putArray("containers");
    String[] names = {"web", "metrics", "log-shipper"};
    for (int c = 0; c < names.length; c++) {
      ObjectNode container = containers.addObject().put("name", names[c])
          .put("image", "registry.example.com/" + names[c] + ":1.28.0");
      ArrayNode ports = container.putArray("ports");
      ports.addObject().put("containerPort", 8080 + c).put("name", "http-" + c);
      ports.addObject().put("containerPort", 9090 + c).put("name", "admin-" + c);
      ArrayNode env = container.putArray("env");
      for (int e = 0; e < 5; e++) {
        env.addObject().put("name", "ENV_" + e).put("value", "value-" + c + "-" + e);
      }
      ArrayNode mounts = container.putArray("volumeMounts");
      mounts.addObject().put("name", "data").put("mountPath", "/data/" + names[c]);
      mounts.addObject().put("name", "config").put("mountPath", "/etc/" + names[c]).put("readOnly", true);
      container.putObject("resources").putObject("requests").put("cpu", "100m").put("memory", "128Mi");
    }
    ArrayNode volumes = spec.putArray("volumes");
    volumes.addObject().put("name", "data").putObject("emptyDir");
    volumes.addObject().put("name", "config").putObject("configMap").put("name", "web-config");
  }

  /** What the API server adds to a pod spec: defaults inside every container and item, and pod-level fields. */
  private static void defaultPodSpec(ObjectNode spec) {
    for (var container : spec.get("containers")) {
      ObjectNode c = (ObjectNode) container;
      c.put("imagePullPolicy", "IfNotPresent").put("terminationMessagePath", "/dev/termination-log")
          .put("terminationMessagePolicy", "File");
      for (var port : c.get("ports")) {
        ((ObjectNode) port).put("protocol", "TCP");
      }
    }
    ((ObjectNode) spec.at("/volumes/1/configMap")).put("defaultMode", 420);
    spec.put("dnsPolicy", "ClusterFirst").put("restartPolicy", "Always").put("schedulerName", "default-scheduler")
        .put("terminationGracePeriodSeconds", 30).put("serviceAccountName", "default");
    spec.putObject("securityContext");
    spec.putArray("tolerations").addObject().put("key", "node.kubernetes.io/not-ready").put("operator", "Exists")
        .put("effect", "NoExecute").put("tolerationSeconds", 300);
  }

  /**
   * The {@code fieldsV1} the API server records for an apply of {@code configuration} to {@code live}: every field
   * it sets, with the items of object lists keyed as Kubernetes' schemas key them (a container port by
   * {@code containerPort} and the {@code protocol} the server defaulted, a volume mount by {@code mountPath},
   * containers, env vars, volumes and the custom resource's members by {@code name}).
   */
  static ObjectNode appliedFields(JsonNode configuration, JsonNode live) {
    ObjectNode set = F.objectNode();
    configuration.properties().forEach(field -> {
      if (field.getKey().equals("apiVersion") || field.getKey().equals("kind")) {
        return;
      }
      JsonNode value = field.getValue();
      JsonNode liveValue = live.path(field.getKey());
      ObjectNode child;
      if (field.getKey().equals("metadata")) {
        ObjectNode rest = ((ObjectNode) value).deepCopy();
        rest.remove("name");
        rest.remove("namespace");
        child = appliedFields(rest, liveValue);
      } else if (value.isObject()) {
        child = appliedFields(value, liveValue);
      } else if (value.isArray() && value.size() > 0 && value.get(0).isObject()) {
        child = F.objectNode();
        for (int i = 0; i < value.size(); i++) {
          ObjectNode key = keyOf(value.get(i), liveValue.path(i));
          ObjectNode item = appliedFields(value.get(i), liveValue.path(i));
          item.putObject(".");
          child.set("k:" + key, item);
        }
      } else {
        child = F.objectNode();
      }
      if (!child.isEmpty() || !field.getKey().equals("metadata")) {
        set.set("f:" + field.getKey(), child);
      }
    });
    return set;
  }

  private static ObjectNode keyOf(JsonNode item, JsonNode liveItem) {
    ObjectNode key = F.objectNode();
    if (item.has("containerPort")) {
      key.set("containerPort", item.get("containerPort"));
      key.set("protocol", liveItem.path("protocol"));
    } else if (item.has("mountPath")) {
      key.set("mountPath", item.get("mountPath"));
    } else {
      key.set("name", item.get("name"));
    }
    return key;
  }

  private static ObjectNode object(String apiVersion, String kind, String name) {
    ObjectNode object = F.objectNode().put("apiVersion", apiVersion).put("kind", kind);
    object.putObject("metadata").put("name", name).put("namespace", "default");
    return object;
  }

  /** The desired object as the engine created it, plus the system metadata the API server sets. */
  private static ObjectNode live(ObjectNode desired) {
    ObjectNode observed = DynamicApply.create(desired).object();
    ObjectNode metadata = (ObjectNode) observed.get("metadata");
    metadata.put("uid", "5f0c1b7e-8d3a-4f0e-9a51-0c6f7d2e1a90").put("resourceVersion", "184467")
        .put("generation", 3).put("creationTimestamp", "2026-11-20T08:15:00Z");
    metadata.putArray("ownerReferences").addObject().put("apiVersion", "example.com/v1").put("kind", "Parent")
        .put("name", "parent").put("uid", "0d9e7c52-4b0f-4b6e-8d9c-3e2a1f0b7c65").put("controller", true)
        .put("blockOwnerDeletion", true);
    metadata.putArray("managedFields").addObject().put("manager", "metareactor").put("operation", "Update")
        .put("apiVersion", desired.get("apiVersion").stringValue()).put("time", "2026-11-20T08:15:00Z");
    return observed;
  }
}
