package dev.metareactor.apply;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * {@link ServerSideApply#unchanged} against objects and field sets as a real kube-apiserver (v1.34) recorded them
 * after an apply by manager {@code metacontroller}.
 */
class ServerSideApplyTest {

  private static final JsonMapper MAPPER = JsonMapper.builder().build();

  /** A ConfigMap applied with data {k: v} and label a=1, and the owner's ControllerRef. */
  private static final String CONFIG_MAP = """
      {"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c1","namespace":"default","uid":"u1",
       "resourceVersion":"208","labels":{"a":"1","other":"x"},
       "ownerReferences":[{"apiVersion":"example.com/v1","kind":"Parent","name":"p","uid":"p1","controller":true,
         "blockOwnerDeletion":true}]},
       "data":{"k":"v","added":"by someone else"}}""";
  private static final String CONFIG_MAP_FIELDS = """
      {"f:data":{"f:k":{}},"f:metadata":{"f:labels":{"f:a":{}},"f:ownerReferences":{"k:{\\"uid\\":\\"p1\\"}":{
        ".":{},"f:apiVersion":{},"f:blockOwnerDeletion":{},"f:controller":{},"f:kind":{},"f:name":{},"f:uid":{}}}}}""";
  private static final String CONFIG_MAP_CONFIGURATION = """
      {"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c1","namespace":"default","labels":{"a":"1"},
       "ownerReferences":[{"apiVersion":"example.com/v1","kind":"Parent","name":"p","uid":"p1","controller":true,
         "blockOwnerDeletion":true}]},
       "data":{"k":"v"}}""";

  /** A Deployment applied with one container, a port without protocol (defaulted TCP) and a CPU of 1000m. */
  private static final String DEPLOYMENT = """
      {"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d2","namespace":"default","generation":1},
       "spec":{"replicas":1,"revisionHistoryLimit":10,"selector":{"matchLabels":{"app":"x"}},
        "template":{"metadata":{"labels":{"app":"x"}},"spec":{"containers":[{"name":"c","image":"nginx",
          "ports":[{"containerPort":80,"protocol":"TCP"}],"resources":{"limits":{"cpu":"1"}},
          "terminationMessagePath":"/dev/termination-log","imagePullPolicy":"Always"}],"restartPolicy":"Always"}}},
       "status":{"replicas":1}}""";
  private static final String DEPLOYMENT_FIELDS = """
      {"f:spec":{"f:selector":{},"f:template":{"f:metadata":{"f:labels":{"f:app":{}}},"f:spec":{"f:containers":{
        "k:{\\"name\\":\\"c\\"}":{".":{},"f:image":{},"f:name":{},"f:ports":{
          "k:{\\"containerPort\\":80,\\"protocol\\":\\"TCP\\"}":{".":{},"f:containerPort":{}}},
          "f:resources":{"f:limits":{"f:cpu":{}}}}}}}}}""";
  private static final String DEPLOYMENT_CONFIGURATION = """
      {"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d2","namespace":"default"},
       "spec":{"selector":{"matchLabels":{"app":"x"}},"template":{"metadata":{"labels":{"app":"x"}},
        "spec":{"containers":[{"name":"c","image":"nginx","ports":[{"containerPort":80}],
          "resources":{"limits":{"cpu":"1"}}}]}}}}""";

  private static ObjectNode json(String text) {
    return (ObjectNode) MAPPER.readTree(text);
  }

  private static boolean unchanged(String live, String configuration, String fields) {
    return ServerSideApply.unchanged(json(live), json(configuration), FieldSet.of(json(fields)));
  }

  /** Changes {@code path} (slash-separated, numbers index lists) of a JSON text to {@code value}. */
  private static String with(String text, String path, Object value) {
    ObjectNode root = json(text);
    String[] parts = path.split("/");
    JsonNode node = root;
    for (int i = 0; i < parts.length - 1; i++) {
      node = node.isArray() ? node.get(Integer.parseInt(parts[i])) : node.get(parts[i]);
    }
    String last = parts[parts.length - 1];
    JsonNode newValue = value == null ? null : MAPPER.valueToTree(value);
    if (node instanceof ObjectNode object) {
      if (newValue == null) {
        object.remove(last);
      } else {
        object.set(last, newValue);
      }
    } else {
      tools.jackson.databind.node.ArrayNode array = (tools.jackson.databind.node.ArrayNode) node;
      int index = Integer.parseInt(last);
      if (index == array.size()) {
        array.add(newValue);
      } else {
        array.set(index, newValue);
      }
    }
    return root.toString();
  }

  @Test
  void theSameConfigurationOverWhatItAppliedChangesNothing() {
    assertThat(unchanged(CONFIG_MAP, CONFIG_MAP_CONFIGURATION, CONFIG_MAP_FIELDS)).isTrue();
    assertThat(unchanged(DEPLOYMENT, DEPLOYMENT_CONFIGURATION, DEPLOYMENT_FIELDS))
        .as("defaults, status and a defaulted key field (protocol) are the server's, not a change").isTrue();
  }

  @Test
  void anOwnedFieldChangedByHandIsDriftEvenWithoutANewGeneration() {
    assertThat(unchanged(with(CONFIG_MAP, "data/k", "edited"), CONFIG_MAP_CONFIGURATION, CONFIG_MAP_FIELDS))
        .isFalse();
    assertThat(unchanged(with(CONFIG_MAP, "metadata/labels/a", "2"), CONFIG_MAP_CONFIGURATION, CONFIG_MAP_FIELDS))
        .isFalse();
    assertThat(unchanged(with(CONFIG_MAP, "data/k", null), CONFIG_MAP_CONFIGURATION, CONFIG_MAP_FIELDS))
        .as("an owned field deleted by hand").isFalse();
    assertThat(unchanged(with(DEPLOYMENT, "spec/template/spec/containers/0/image", "nginx:2"),
        DEPLOYMENT_CONFIGURATION, DEPLOYMENT_FIELDS)).isFalse();
    assertThat(unchanged(with(DEPLOYMENT, "spec/selector/matchLabels/app", "y"), DEPLOYMENT_CONFIGURATION,
        DEPLOYMENT_FIELDS)).as("an atomic map, owned whole").isFalse();
  }

  @Test
  void fieldsOfOtherManagersAreNotOurs() {
    assertThat(unchanged(with(CONFIG_MAP, "data/added", "changed again"), CONFIG_MAP_CONFIGURATION,
        CONFIG_MAP_FIELDS)).isTrue();
    assertThat(unchanged(with(DEPLOYMENT, "spec/replicas", 3), DEPLOYMENT_CONFIGURATION, DEPLOYMENT_FIELDS))
        .isTrue();
  }

  @Test
  void aNewDesiredValueOrFieldIsAChange() {
    assertThat(unchanged(CONFIG_MAP, with(CONFIG_MAP_CONFIGURATION, "data/k", "v2"), CONFIG_MAP_FIELDS)).isFalse();
    assertThat(unchanged(CONFIG_MAP, with(CONFIG_MAP_CONFIGURATION, "data/other", "x"), CONFIG_MAP_FIELDS))
        .as("a field another manager holds with the same value is still to be taken over").isFalse();
    assertThat(unchanged(CONFIG_MAP, with(CONFIG_MAP_CONFIGURATION, "metadata/labels/other", "x"),
        CONFIG_MAP_FIELDS)).isFalse();
  }

  @Test
  void aFieldNoLongerDesiredIsAChangeBecauseTheApplyRemovesIt() {
    assertThat(unchanged(CONFIG_MAP, with(CONFIG_MAP_CONFIGURATION, "data/k", null), CONFIG_MAP_FIELDS)).isFalse();
    assertThat(unchanged(CONFIG_MAP, with(CONFIG_MAP_CONFIGURATION, "metadata/labels", null), CONFIG_MAP_FIELDS))
        .isFalse();
    assertThat(unchanged(DEPLOYMENT, with(DEPLOYMENT_CONFIGURATION, "spec/template/spec/containers/0/ports", null),
        DEPLOYMENT_FIELDS)).isFalse();
  }

  @Test
  void listItemsAreComparedByTheirKeys() {
    String twoContainers = with(DEPLOYMENT_CONFIGURATION, "spec/template/spec/containers/1",
        MAPPER.readTree("{\"name\":\"d\",\"image\":\"busybox\"}"));
    assertThat(unchanged(DEPLOYMENT, twoContainers, DEPLOYMENT_FIELDS)).as("an item added").isFalse();
    assertThat(unchanged(DEPLOYMENT, with(DEPLOYMENT_CONFIGURATION, "spec/template/spec/containers/0/name", "e"),
        DEPLOYMENT_FIELDS)).as("an item renamed").isFalse();
    assertThat(unchanged(DEPLOYMENT, with(DEPLOYMENT_CONFIGURATION,
        "spec/template/spec/containers/0/ports/0/protocol", "UDP"), DEPLOYMENT_FIELDS))
        .as("a key field given another value than the recorded key").isFalse();
  }

  @Test
  void aValueTheServerNormalisesIsReportedChanged() {
    // 1000m is stored as 1: the verdict errs towards an apply, which the engine then remembers.
    assertThat(unchanged(DEPLOYMENT, with(DEPLOYMENT_CONFIGURATION,
        "spec/template/spec/containers/0/resources/limits/cpu", "1000m"), DEPLOYMENT_FIELDS)).isFalse();
  }

  @Test
  void nothingOwnedMeansEverythingIsStillToApply() {
    assertThat(ServerSideApply.unchanged(json(CONFIG_MAP), json(CONFIG_MAP_CONFIGURATION), null)).isFalse();
    assertThat(unchanged(CONFIG_MAP, CONFIG_MAP_CONFIGURATION, "{}")).isFalse();
  }

  @Test
  void emptyConfiguredValuesMatchWhatTheServerKeepsOfThem() {
    assertThat(unchanged(CONFIG_MAP, with(CONFIG_MAP_CONFIGURATION, "metadata/annotations",
        MAPPER.createObjectNode()), CONFIG_MAP_FIELDS)).isTrue();
  }

  @Test
  void setsAreComparedByValue() {
    String live = "{\"apiVersion\":\"v1\",\"kind\":\"X\",\"metadata\":{\"name\":\"x\",\"finalizers\":[\"a\",\"b\"]}}";
    String fields = "{\"f:metadata\":{\"f:finalizers\":{\".\":{},\"v:\\\"a\\\"\":{}}}}";
    String configuration =
        "{\"apiVersion\":\"v1\",\"kind\":\"X\",\"metadata\":{\"name\":\"x\",\"finalizers\":[\"a\"]}}";
    assertThat(unchanged(live, configuration, fields)).isTrue();
    assertThat(unchanged(live, configuration.replace("[\"a\"]", "[\"a\",\"c\"]"), fields)).isFalse();
    assertThat(unchanged(live.replace("[\"a\",\"b\"]", "[\"b\"]"), configuration, fields)).isFalse();
  }

  @Test
  void theConfigurationLeavesOutWhatApplyNeverWrites() {
    ObjectNode desired = json("""
        {"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","uid":"u","resourceVersion":"3",
         "creationTimestamp":"x","managedFields":[],
         "annotations":{"metacontroller.k8s.io/last-applied-configuration":"{}"}},
         "data":{"k":"v"},"status":{"x":1}}""");
    assertThat(ServerSideApply.configuration(desired))
        .isEqualTo(json("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"c\"},"
            + "\"data\":{\"k\":\"v\"}}"));
    assertThat(desired.path("metadata").has("uid")).as("the input is not changed").isTrue();
  }
}
