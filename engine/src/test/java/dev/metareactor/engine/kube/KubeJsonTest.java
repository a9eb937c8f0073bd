package dev.metareactor.engine.kube;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import tools.jackson.core.JsonParser;
import tools.jackson.core.JsonToken;

class KubeJsonTest {

  private static byte[] childOf(String owner, String name) {
    return ("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"" + name + "\","
        + "\"ownerReferences\":[{\"apiVersion\":\"ex.com/v1\",\"kind\":\"P\",\"name\":\"p\",\"uid\":\"" + owner
        + "\",\"controller\":true}],\"managedFields\":[{\"manager\":\"m\",\"fieldsV1\":{\"f:metadata\":"
        + "{\"f:ownerReferences\":{\"k:{\\\"uid\\\":\\\"" + owner + "\\\"}\":{}}}}}]},\"data\":{\"k\":\"v\"}}")
        .getBytes(StandardCharsets.UTF_8);
  }

  /** The engine splices objects by byte offsets, which Jackson's character-based parser does not give. */
  @Test
  void objectParsersTellByteOffsets() {
    try (JsonParser parser = KubeJson.objectParser("{\"a\":[1,\"é\",2]}".getBytes(StandardCharsets.UTF_8))) {
      while (parser.nextToken() != JsonToken.END_ARRAY) {
        // to the array's end, past a character of two bytes
      }
      assertThat(parser.currentTokenLocation().getByteOffset()).isEqualTo(14);
    }
  }

  /**
   * Each child names its own owner in {@code managedFields}; the names they add to the object parsers' table are
   * dropped with the table once it holds {@link KubeJson#MAX_OBJECT_NAMES}, so it never grows to Jackson's 6,000.
   */
  @Test
  void theObjectParsersTableOfNamesStaysBounded() {
    int most = 0;
    for (int i = 0; i < 3 * KubeJson.MAX_OBJECT_NAMES; i++) {
      KubeObject.parse(childOf("uid-" + i, "c" + i));
      most = Math.max(most, KubeJson.objectNames());
    }
    // Each parse adds one name (and the first some twenty more); without the renewal the table would hold about
    // 3,000 by now. Twice the bound leaves room for parsers of other tests' threads in this JVM.
    assertThat(most).isBetween(KubeJson.MAX_OBJECT_NAMES, 2 * KubeJson.MAX_OBJECT_NAMES);
  }

  @Test
  void objectsNamingDistinctOwnersReadWholeWithoutTheirManagedFields() {
    for (int i = 0; i < 3; i++) {
      String owner = "uid-" + i;

      KubeObject object = KubeObject.parse(childOf(owner, "c" + i));

      assertThat(object.controller().uid()).isEqualTo(owner);
      assertThat(KubeJson.text(object.toTree())).isEqualTo("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
          + "\"metadata\":{\"name\":\"c" + i + "\",\"ownerReferences\":[{\"apiVersion\":\"ex.com/v1\",\"kind\":\"P\","
          + "\"name\":\"p\",\"uid\":\"" + owner + "\",\"controller\":true}]},\"data\":{\"k\":\"v\"}}");
    }
  }
}
