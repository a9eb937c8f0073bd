package dev.metareactor.engine.kube;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class SharedStringsTest {

  /** A new String of {@code text}'s characters: never the same instance as another. */
  private static String copyOf(String text) {
    return new String(text.getBytes(StandardCharsets.UTF_8), StandardCharsets.UTF_8);
  }

  @Test
  void theChildrenOfOneParentKeepOneCopyOfItsNameAndUid() {
    String[] read = new String[3];
    for (int child = 0; child < read.length; child++) {
      read[child] = SharedStrings.share(copyOf("6a1f0e0c-93a5-4c8e-b0f3-6a2f9c1d2e11"));
    }
    assertThat(read[1]).isSameAs(read[0]);
    assertThat(read[2]).isSameAs(read[0]);
  }

  @Test
  void aStringThatLostItsSlotIsStillGivenBackEqual() {
    String before = SharedStrings.share(copyOf("team-a"));
    for (int i = 0; i < 4 * SharedStrings.SLOTS; i++) {
      String value = "uid-" + i;
      assertThat(SharedStrings.share(value)).isEqualTo(value);
    }
    assertThat(SharedStrings.share(copyOf("team-a"))).isEqualTo(before);
  }

  @Test
  void kubeObjectsReadApartShareTheirStrings() {
    String json = """
        {"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"%s","namespace":"team-a",
        "labels":{"app.kubernetes.io/name":"load","parent":"p-1"},
        "ownerReferences":[{"apiVersion":"bench.metareactor.dev/v1","kind":"Load","name":"p-1",
        "uid":"0b3e2a61-3f5c-4a8e-8d2c-1e0f9a7b6c55","controller":true}]}}""";
    KubeObject first = KubeObject.parse(json.formatted("p-1-0").getBytes(StandardCharsets.UTF_8));
    KubeObject second = KubeObject.parse(json.formatted("p-1-1").getBytes(StandardCharsets.UTF_8));

    assertThat(second.namespace()).isSameAs(first.namespace());
    assertThat(second.labels().get("parent")).isSameAs(first.labels().get("parent"));
    assertThat(second.ownerReferences().get(0).uid()).isSameAs(first.ownerReferences().get(0).uid());
  }
}
