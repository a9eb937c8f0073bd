package dev.metareactor.engine.controller.rolling;

import static org.assertj.core.api.Assertions.assertThat;

import dev.metareactor.engine.kube.KubeJson;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The expected names were computed with Go's standard library ({@code crypto/sha1} over the UID and
 * {@code encoding/json.Marshal} of the decoded patch), the way Metacontroller names its revisions.
 */
class RevisionNameTest {

  private static byte[] patch(String json) {
    return RevisionPatch.of(KubeJson.mapper().readTree(json), List.of("spec")).goJson();
  }

  @Test
  void aRevisionIsNamedAfterItsResourceAndTheHashOfItsParentsUidAndPatch() {
    byte[] patch = patch("{\"spec\":{\"template\":{\"metadata\":{\"labels\":{\"app\":\"nginx\"}}},\"replicas\":3,"
        + "\"note\":\"<a&b>\",\"ratio\":0.5}}");

    assertThat(RevisionName.of("catsets", "ctl.enisoc.com", "6f1f4d0e-2b8a-4c51-9d3e-0a7c2f1b9e44", patch))
        .isEqualTo("catsets.ctl.enisoc.com-05b721da1fd9d0259604ddd652a994f4c50fb1e5");
  }

  @Test
  void theCoreGroupIsSpelledCore() {
    assertThat(RevisionName.of("widgets", "", "uid-1", patch("{\"spec\":{}}")))
        .isEqualTo("widgets.core-524ecc25eb868808dd2246c7650b6cada48dcfa7");
  }

  @Test
  void aLongPrefixIsCutSoTheNameFitsADnsSubdomain() {
    String name = RevisionName.of("x".repeat(220), "example.com", "uid-2", "{}".getBytes());

    assertThat(name).isEqualTo("x".repeat(212) + "-b4dc18fbae73d3f4fbcf3b9d9e32d7e9643e4263");
    assertThat(name).hasSize(253);
  }

  @Test
  void anotherParentOrPatchIsAnotherName() {
    byte[] patch = patch("{\"spec\":{\"replicas\":1}}");

    assertThat(RevisionName.of("catsets", "g", "uid-a", patch)).isNotEqualTo(RevisionName.of("catsets", "g", "uid-b",
        patch));
    assertThat(RevisionName.of("catsets", "g", "uid-a", patch)).isNotEqualTo(RevisionName.of("catsets", "g",
        "uid-a", patch("{\"spec\":{\"replicas\":2}}")));
  }
}
