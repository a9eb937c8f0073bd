package dev.metareactor.engine.kube;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import tools.jackson.core.JsonParser;
import tools.jackson.databind.node.ObjectNode;

class KubeObjectTest {

  private static final String POD = """
      {"apiVersion":"v1","kind":"Pod","metadata":{"name":"web-0","namespace":"prod","uid":"u1",
       "resourceVersion":"42","generation":3,"deletionTimestamp":"2026-11-23T10:00:00Z",
       "labels":{"app":"web"},"annotations":{"note":"x"},"finalizers":["a","b"],
       "ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"rs","uid":"u0"},
                          {"apiVersion":"ex.com/v1","kind":"Web","name":"web","uid":"u9","controller":true,
                           "blockOwnerDeletion":true}],
       "managedFields":[{"manager":"kubectl","fieldsV1":{"f:metadata":{}}}]},
       "spec":{"containers":[{"name":"c","image":"nginx","ports":[{"containerPort":80}]}]},
       "status":{"phase":"Running"}}""";

  @Test
  void readsTheMetadataItRoutesBy() {
    KubeObject pod = KubeObject.parse(POD.getBytes(StandardCharsets.UTF_8));
    assertThat(pod.apiVersion()).isEqualTo("v1");
    assertThat(pod.kind()).isEqualTo("Pod");
    assertThat(pod.namespace()).isEqualTo("prod");
    assertThat(pod.name()).isEqualTo("web-0");
    assertThat(pod.uid()).isEqualTo("u1");
    assertThat(pod.resourceVersion()).isEqualTo("42");
    assertThat(pod.generation()).isEqualTo(3);
    assertThat(pod.deleting()).isTrue();
    assertThat(pod.labels()).isEqualTo(Map.of("app", "web"));
    assertThat(pod.annotations()).isEqualTo(Map.of("note", "x"));
    assertThat(pod.finalizers()).containsExactly("a", "b");
    assertThat(pod.ownerReferences()).hasSize(2);
    assertThat(pod.controller()).isEqualTo(new OwnerRef("ex.com/v1", "Web", "web", "u9", true, true));
    assertThat(pod.describe()).isEqualTo("Pod prod/web-0");
  }

  @Test
  void dropsManagedFieldsAndKeepsEverythingElse() {
    KubeObject pod = KubeObject.parse(POD.getBytes(StandardCharsets.UTF_8));
    ObjectNode tree = pod.toTree();
    assertThat(tree.path("metadata").has("managedFields")).isFalse();
    ObjectNode expected = (ObjectNode) KubeJson.mapper().readTree(POD);
    ((ObjectNode) expected.get("metadata")).remove("managedFields");
    assertThat(tree).isEqualTo(expected);
    // The bytes are the source's own, only without managedFields (the API server's JSON is compact already).
    String managedFields = ",\n \"managedFields\":[{\"manager\":\"kubectl\",\"fieldsV1\":{\"f:metadata\":{}}}]";
    assertThat(POD).contains(managedFields);
    assertThat(pod.size()).isEqualTo(POD.getBytes(StandardCharsets.UTF_8).length - managedFields.length());
  }

  @Test
  void eachTreeIsAFreshCopyAndTheRawFormWritesTheSameJson() {
    KubeObject pod = KubeObject.parse(POD.getBytes(StandardCharsets.UTF_8));
    pod.toTree().put("kind", "Changed");
    assertThat(pod.toTree().path("kind").asString()).isEqualTo("Pod");
    ObjectNode holder = KubeJson.nodes().objectNode();
    holder.putRawValue("pod", pod.raw());
    assertThat(KubeJson.mapper().readTree(KubeJson.text(holder)).get("pod")).isEqualTo(pod.toTree());
  }

  @Test
  void anObjectWithoutMetadataOrScopeHasEmptyDefaults() {
    KubeObject ns = KubeObject.parse("{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"a\"}}"
        .getBytes(StandardCharsets.UTF_8));
    assertThat(ns.namespace()).isEmpty();
    assertThat(ns.labels()).isEmpty();
    assertThat(ns.finalizers()).isEmpty();
    assertThat(ns.controller()).isNull();
    assertThat(ns.deleting()).isFalse();
    assertThat(ns.generation()).isZero();
    assertThat(ns.uid()).isNull();
    assertThatThrownBy(() -> KubeObject.parse("{\"kind\":\"Status\"}".getBytes(StandardCharsets.UTF_8)))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> KubeObject.parse("[]".getBytes(StandardCharsets.UTF_8)))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void listItemsGetTheResourcesTypeAndEverythingElseStaysByteForByte() {
    // As a list of a built-in type sends its items: no apiVersion or kind, managedFields last in metadata.
    String item = "{\"metadata\":{\"name\":\"cm\",\"labels\":null,\"annotations\":{\"n\":1,\"s\":\"x\"},"
        + "\"generation\":\"not a number\",\"managedFields\":[{\"f\":{\"a\":[1,2]}}]},\"data\":{\"k\":\"v\"}}";
    byte[] page = ("{\"items\":[" + item + "]}").getBytes(StandardCharsets.UTF_8);
    try (var parser = KubeJson.mapper().createParser(page)) {
      parser.nextToken();
      parser.nextToken();
      parser.nextToken();
      parser.nextToken();
      KubeObject cm = KubeObject.read(parser, page, "v1", "ConfigMap", null);
      assertThat(cm.kind()).isEqualTo("ConfigMap");
      assertThat(cm.labels()).isEmpty();
      assertThat(cm.annotations()).isEqualTo(Map.of("s", "x"));
      assertThat(cm.generation()).isZero();
      assertThat(new String(KubeJson.bytes(cm.toTree()), StandardCharsets.UTF_8)).isEqualTo(
          "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"cm\",\"labels\":null,"
          + "\"annotations\":{\"n\":1,\"s\":\"x\"},\"generation\":\"not a number\"},\"data\":{\"k\":\"v\"}}");
    }
  }

  @Test
  void managedFieldsLeaveWithTheRightCommaWhereverTheyStand() {
    for (String metadata : List.of(
        "{\"managedFields\":[],\"name\":\"a\"}",
        "{\"name\":\"a\",\"managedFields\":[{}],\"uid\":\"u\"}",
        "{ \"managedFields\" : [ {\"x\":\"]\"} ] , \"name\":\"a\" }",
        "{\"name\":\"a\",\"managedFields\":[]}")) {
      KubeObject object = KubeObject.parse(("{\"kind\":\"K\",\"metadata\":" + metadata + ",\"spec\":1}")
          .getBytes(StandardCharsets.UTF_8));
      assertThat(object.name()).isEqualTo("a");
      assertThat(object.toTree().path("metadata").has("managedFields")).as(metadata).isFalse();
      assertThat(object.toTree().path("spec").asInt()).isEqualTo(1);
    }
  }

  /**
   * A long annotation (a last-applied configuration holds a whole object) is read from the object's own JSON, where
   * it is stored once: wherever managedFields stood and whatever the list item's missing type added, with escapes.
   */
  @Test
  void aLongAnnotationIsReadFromTheObjectsJsonWhereverItStands() {
    String lastApplied = "{\"apiVersion\":\"v1\",\"data\":{\"k\":\"caf\u00e9 \\\"quoted\\\" \\\\ "
        + "x".repeat(30) + "\"}}";
    String quoted = KubeJson.quote(lastApplied);
    String annotations = "\"annotations\":{\"short\":\"s\",\"metacontroller.k8s.io/last-applied-configuration\":"
        + quoted + ",\"tail\":\"t\"}";
    String managed = "\"managedFields\":[{\"manager\":\"m\",\"fieldsV1\":{\"f:data\":{}}}]";
    for (String metadata : List.of(
        "{" + managed + ",\"name\":\"a\"," + annotations + "}",
        "{\"name\":\"a\"," + annotations + "," + managed + "}",
        "{\"name\":\"a\"," + managed + "," + annotations + "}",
        "{\"name\":\"a\"," + annotations + "}")) {
      byte[] source = ("[{\"metadata\":" + metadata + ",\"data\":{}}]").getBytes(StandardCharsets.UTF_8);
      try (JsonParser parser = KubeJson.mapper().createParser(source)) {
        parser.nextToken();
        parser.nextToken();
        KubeObject object = KubeObject.read(parser, source, "v1", "ConfigMap", null);
        assertThat(object.annotations().get("metacontroller.k8s.io/last-applied-configuration")).as(metadata)
            .isEqualTo(lastApplied);
        assertThat(object.annotations()).containsExactly(Map.entry("short", "s"),
            Map.entry("metacontroller.k8s.io/last-applied-configuration", lastApplied), Map.entry("tail", "t"));
        assertThat(((MetadataStrings) object.annotations()).keptInJson(
            "metacontroller.k8s.io/last-applied-configuration")).isTrue();
        assertThat(object.toTree().path("metadata").path("annotations")
            .path("metacontroller.k8s.io/last-applied-configuration").asString()).isEqualTo(lastApplied);
      }
    }
  }

  @Test
  void anObjectKeptDeflatedReadsAsTheSameJsonEverywhere() {
    String payload = "payload with some words in it, ".repeat(12);
    String lastApplied = "{\"apiVersion\":\"v1\",\"data\":{\"payload\":\"" + payload + "\"},\"kind\":\"ConfigMap\"}";
    byte[] json = ("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"c\",\"namespace\":\"n\","
        + "\"annotations\":{\"metacontroller.k8s.io/last-applied-configuration\":" + KubeJson.quote(lastApplied)
        + "}},\"data\":{\"payload\":\"" + payload + "\"}}").getBytes(StandardCharsets.UTF_8);
    KubeObject object = KubeObject.parse(json);
    assertThat(object.size()).isEqualTo(json.length);
    assertThat(object.storedSize()).isLessThan(json.length / 4);
    assertThat(object.toTree()).isEqualTo(KubeJson.mapper().readTree(json));
    assertThat(object.annotations().get("metacontroller.k8s.io/last-applied-configuration")).isEqualTo(lastApplied);
    assertThat(object.annotations()).isEqualTo(KubeObject.parse(json).annotations());

    ObjectNode request = KubeJson.nodes().objectNode();
    request.putRawValue("object", object.raw());
    assertThat(KubeJson.mapper().readTree(KubeJson.bytes(request)).get("object"))
        .isEqualTo(KubeJson.mapper().readTree(json));
    assertThat(KubeJson.mapper().writeValueAsString(request))
        .isEqualTo("{\"object\":" + new String(json, StandardCharsets.UTF_8) + "}");
  }

  @Test
  void labelsAndAnnotationsAreMapsOfStringsInTheObjectsOrder() {
    String big = "x".repeat(200);
    KubeObject object = KubeObject.parse(("{\"kind\":\"K\",\"metadata\":{\"name\":\"a\","
        + "\"labels\":{\"b\":\"2\",\"a\":\"1\",\"n\":3},\"annotations\":{\"z\":\"" + big + "\",\"y\":\"\"}}}")
        .getBytes(StandardCharsets.UTF_8));
    assertThat(object.labels()).containsExactly(Map.entry("b", "2"), Map.entry("a", "1"));
    assertThat(object.labels()).isEqualTo(Map.of("a", "1", "b", "2")).hasSameHashCodeAs(Map.of("a", "1", "b", "2"));
    assertThat(object.labels().get("n")).isNull();
    assertThat(object.labels().containsKey("a")).isTrue();
    assertThat(object.annotations()).isEqualTo(Map.of("z", big, "y", ""));
    assertThatThrownBy(() -> object.labels().put("c", "3")).isInstanceOf(UnsupportedOperationException.class);

    KubeObject same = KubeObject.parse(KubeJson.bytes(object.toTree()));
    KubeObject reordered = KubeObject.parse(("{\"kind\":\"K\",\"metadata\":{\"name\":\"a\",\"annotations\":{"
        + "\"y\":\"\",\"z\":\"" + big + "\"}}}").getBytes(StandardCharsets.UTF_8));
    KubeObject escaped = KubeObject.parse(("{\"kind\":\"K\",\"metadata\":{\"name\":\"a\",\"annotations\":{"
        + "\"z\":\"\\u0078" + "x".repeat(199) + "\",\"y\":\"\"}}}").getBytes(StandardCharsets.UTF_8));
    KubeObject changed = KubeObject.parse(("{\"kind\":\"K\",\"metadata\":{\"name\":\"a\",\"annotations\":{"
        + "\"z\":\"" + big + "!\",\"y\":\"\"}}}").getBytes(StandardCharsets.UTF_8));
    assertThat(same.annotations()).isEqualTo(object.annotations());
    assertThat(reordered.annotations()).isEqualTo(object.annotations());
    assertThat(escaped.annotations()).isEqualTo(object.annotations());
    assertThat(changed.annotations()).isNotEqualTo(object.annotations());
    assertThat(KubeObject.parse("{\"metadata\":{\"name\":\"a\"}}".getBytes(StandardCharsets.UTF_8)).labels())
        .isEqualTo(Map.of());
  }

  @Test
  void jsonLinesSplitsWhateverTheChunkBoundaries() {
    JsonLines lines = new JsonLines(1 << 10);
    List<String> seen = new java.util.ArrayList<>();
    for (String chunk : List.of("{\"a\":", "1}\n{\"b\"", ":2}\n\n  \n{\"c\":3}\n{\"d\"")) {
      lines.feed(chunk.getBytes(StandardCharsets.UTF_8)).forEach(l -> seen.add(new String(l, StandardCharsets.UTF_8)));
    }
    assertThat(seen).containsExactly("{\"a\":1}", "{\"b\":2}", "{\"c\":3}");
    assertThat(new String(lines.rest(), StandardCharsets.UTF_8)).isEqualTo("{\"d\"");
    assertThat(lines.rest()).isNull();
    JsonLines small = new JsonLines(8);
    assertThatThrownBy(() -> small.feed("0123456789".getBytes(StandardCharsets.UTF_8)))
        .isInstanceOf(IllegalStateException.class);
  }
}
