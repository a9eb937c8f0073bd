package dev.metareactor.apply;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

class FieldSetTest {

  private static final JsonMapper MAPPER = JsonMapper.builder().build();

  private static ObjectNode json(String text) {
    return (ObjectNode) MAPPER.readTree(text);
  }

  private static FieldSet set(String text) {
    return FieldSet.of(json(text));
  }

  @Test
  void unionKeepsEveryPathAndALeafStaysOwnedBesideNewChildren() {
    FieldSet a = set("{\"f:data\":{\"f:a\":{}},\"f:spec\":{}}");
    FieldSet b = set("{\"f:data\":{\"f:b\":{}},\"f:spec\":{\"f:x\":{}}}");
    assertThat(a.union(b).toJson())
        .isEqualTo(json("{\"f:data\":{\"f:a\":{},\"f:b\":{}},\"f:spec\":{\"f:x\":{},\".\":{}}}"));
  }

  @Test
  void withinAndOutsideSplitTheSetByWhatADocumentHolds() {
    FieldSet owned = set("""
        {"f:data":{".":{},"f:a":{},"f:b":{}},"f:spec":{"f:ports":{
          "k:{\\"port\\":80,\\"protocol\\":\\"TCP\\"}":{".":{},"f:port":{},"f:protocol":{}},
          "k:{\\"port\\":81,\\"protocol\\":\\"TCP\\"}":{".":{},"f:port":{}}}}}""");
    ObjectNode document = json("{\"data\":{\"a\":\"1\"},\"spec\":{\"ports\":[{\"port\":80}]}}");
    assertThat(owned.within(document).toJson()).isEqualTo(json("""
        {"f:data":{".":{},"f:a":{}},"f:spec":{"f:ports":{
          "k:{\\"port\\":80,\\"protocol\\":\\"TCP\\"}":{".":{},"f:port":{}}}}}"""));
    assertThat(owned.outside(document).toJson()).isEqualTo(json("""
        {"f:data":{"f:b":{}},"f:spec":{"f:ports":{
          "k:{\\"port\\":80,\\"protocol\\":\\"TCP\\"}":{"f:protocol":{}},
          "k:{\\"port\\":81,\\"protocol\\":\\"TCP\\"}":{".":{},"f:port":{}}}}}"""));
  }

  @Test
  void withoutRemovesAPathAndWhatBecameEmpty() {
    FieldSet owned = set("{\"f:metadata\":{\"f:annotations\":{\"f:x\":{}},\"f:labels\":{\"f:a\":{}}}}");
    assertThat(owned.without(List.of("metadata", "annotations", "x")).toJson())
        .isEqualTo(json("{\"f:metadata\":{\"f:labels\":{\"f:a\":{}}}}"));
    assertThat(owned.without(List.of("spec", "x"))).isEqualTo(owned);
  }

  @Test
  void selectIsWhatTheManagerSetAsTheDocumentShowsIt() {
    FieldSet owned = set("""
        {"f:data":{"f:a":{}},"f:metadata":{"f:labels":{"f:x":{}}},"f:spec":{"f:selector":{},"f:items":{
          "k:{\\"name\\":\\"one\\"}":{".":{},"f:name":{},"f:v":{}}}}}""");
    ObjectNode live = json("""
        {"apiVersion":"v1","metadata":{"name":"n","labels":{"x":"1","y":"2"}},"data":{"a":"1","b":"2"},
         "spec":{"selector":{"m":{"k":"v"}},"items":[{"name":"two","v":2},{"name":"one","v":1,"d":0}]}}""");
    assertThat(owned.select(live)).isEqualTo(json("""
        {"metadata":{"labels":{"x":"1"}},"data":{"a":"1"},
         "spec":{"selector":{"m":{"k":"v"}},"items":[{"name":"one","v":1}]}}"""));
  }

  @Test
  void malformedSetsAreRefused() {
    assertThatThrownBy(() -> FieldSet.of(json("{\"f:a\":1}"))).isInstanceOf(ApplyException.class);
    assertThatThrownBy(() -> FieldSet.of(MAPPER.readTree("[]"))).isInstanceOf(ApplyException.class);
  }
}
