package dev.metareactor.apply;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Set;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

class OwnershipHandoverTest {

  private static final JsonMapper MAPPER = JsonMapper.builder().build();

  /**
   * A Deployment-like child created by dynamic apply (manager metacontroller, Update, which a create makes owner of
   * the server's defaults too), later scaled by another manager; the annotation records what was applied.
   */
  private static final String LIVE = """
      {"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d","namespace":"ns","resourceVersion":"42",
       "annotations":{"metacontroller.k8s.io/last-applied-configuration":
         APPLIED,
         "note":"kept"},
       "labels":{"a":"1"},
       "managedFields":[
        {"manager":"metacontroller","operation":"Update","apiVersion":"apps/v1","time":"2026-11-25T18:45:42Z",
         "fieldsType":"FieldsV1","fieldsV1":{
          "f:metadata":{"f:annotations":{".":{},"f:metacontroller.k8s.io/last-applied-configuration":{}},
            "f:labels":{".":{},"f:a":{}}},
          "f:spec":{"f:revisionHistoryLimit":{},"f:template":{"f:spec":{"f:containers":{
            "k:{\\"name\\":\\"c\\"}":{".":{},"f:image":{},"f:imagePullPolicy":{},"f:name":{},"f:ports":{".":{},
              "k:{\\"containerPort\\":80,\\"protocol\\":\\"TCP\\"}":{".":{},"f:containerPort":{},
              "f:protocol":{}}}}}}}}}},
        {"manager":"kubectl","operation":"Update","apiVersion":"apps/v1","time":"2026-11-25T18:46:00Z",
         "fieldsType":"FieldsV1","fieldsV1":{"f:spec":{"f:replicas":{}},"f:metadata":{"f:annotations":{"f:note":{}}}}},
        {"manager":"metacontroller","operation":"Update","apiVersion":"apps/v1","subresource":"status",
         "fieldsType":"FieldsV1","fieldsV1":{"f:status":{"f:replicas":{}}}}
       ]},
       "spec":{"replicas":3,"revisionHistoryLimit":10,"template":{"spec":{"containers":[{"name":"c","image":"i",
         "imagePullPolicy":"Always","ports":[{"containerPort":80,"protocol":"TCP"}]}]}}}}"""
      .replace("APPLIED", MAPPER.writeValueAsString("{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\","
          + "\"metadata\":{\"name\":\"d\",\"labels\":{\"a\":\"1\"}},\"spec\":{\"template\":{\"spec\":"
          + "{\"containers\":[{\"name\":\"c\",\"image\":\"i\",\"ports\":[{\"containerPort\":80}]}]}}}}"));

  private static ObjectNode json(String text) {
    return (ObjectNode) MAPPER.readTree(text);
  }

  private static ArrayNode patch(String live) {
    return OwnershipHandover.patch(json(live), Set.of("metacontroller", "metareactor"), "metacontroller")
        .orElseThrow();
  }

  @Test
  void whatDynamicApplyAppliedMovesToTheApplyEntryAndTheRestStays() {
    ArrayNode patch = patch(LIVE);
    assertThat(patch.get(0).get("path").stringValue()).isEqualTo("/metadata/managedFields");
    JsonNode entries = patch.get(0).get("value");
    assertThat(entries).hasSize(4);
    JsonNode kept = entries.get(0);
    assertThat(kept.get("operation").stringValue()).isEqualTo("Update");
    assertThat(kept.get("fieldsV1")).as("the server's defaults stay with the former writer; the annotation goes")
        .isEqualTo(json("""
            {"f:metadata":{"f:annotations":{".":{}}},
             "f:spec":{"f:revisionHistoryLimit":{},"f:template":{"f:spec":{"f:containers":{
               "k:{\\"name\\":\\"c\\"}":{"f:imagePullPolicy":{},"f:ports":{
                 "k:{\\"containerPort\\":80,\\"protocol\\":\\"TCP\\"}":{"f:protocol":{}}}}}}}}}"""));
    assertThat(entries.get(1).get("manager").stringValue()).as("another manager's entry, untouched")
        .isEqualTo("kubectl");
    assertThat(entries.get(2).get("subresource").stringValue()).isEqualTo("status");
    JsonNode apply = entries.get(3);
    assertThat(apply.get("manager").stringValue()).isEqualTo("metacontroller");
    assertThat(apply.get("operation").stringValue()).isEqualTo("Apply");
    assertThat(apply.get("apiVersion").stringValue()).isEqualTo("apps/v1");
    assertThat(apply.get("time").stringValue()).isEqualTo("2026-11-25T18:45:42Z");
    assertThat(apply.get("fieldsV1")).isEqualTo(json("""
        {"f:metadata":{"f:labels":{".":{},"f:a":{}}},
         "f:spec":{"f:template":{"f:spec":{"f:containers":{
           "k:{\\"name\\":\\"c\\"}":{".":{},"f:image":{},"f:name":{},"f:ports":{".":{},
             "k:{\\"containerPort\\":80,\\"protocol\\":\\"TCP\\"}":{".":{},"f:containerPort":{}}}}}}}}}"""));
  }

  @Test
  void thePatchIsGuardedByTheResourceVersionAndRemovesTheAnnotation() {
    ArrayNode patch = patch(LIVE);
    assertThat(patch.get(1)).isEqualTo(json(
        "{\"op\":\"replace\",\"path\":\"/metadata/resourceVersion\",\"value\":\"42\"}"));
    assertThat(patch.get(2)).isEqualTo(json("{\"op\":\"remove\",\"path\":"
        + "\"/metadata/annotations/metacontroller.k8s.io~1last-applied-configuration\"}"));
  }

  @Test
  void anExistingApplyEntryGetsTheMovedFieldsAdded() {
    String live = LIVE.replace("\"manager\":\"kubectl\",\"operation\":\"Update\"",
        "\"manager\":\"metacontroller\",\"operation\":\"Apply\"");
    JsonNode entries = patch(live).get(0).get("value");
    assertThat(entries).hasSize(3);
    JsonNode apply = entries.get(1);
    assertThat(apply.get("operation").stringValue()).isEqualTo("Apply");
    assertThat(apply.at("/fieldsV1/f:spec/f:replicas").isObject()).as("what it owned").isTrue();
    assertThat(apply.at("/fieldsV1/f:metadata/f:labels/f:a").isObject()).as("what it was handed").isTrue();
  }

  @Test
  void noAnnotationNothingToHandOver() {
    ObjectNode live = json(LIVE);
    ((ObjectNode) live.at("/metadata/annotations")).remove(LastAppliedConfiguration.ANNOTATION);
    assertThat(OwnershipHandover.patch(live, Set.of("metacontroller"), "metacontroller")).isEmpty();
  }
}
