package dev.metareactor.engine.controller.rolling;

import static org.assertj.core.api.Assertions.assertThat;

import dev.metareactor.engine.kube.KubeJson;
import java.util.List;
import org.junit.jupiter.api.Test;

class RevisionClaimsTest {

  private static final String CHILDREN = "[{\"apiGroup\":\"\",\"kind\":\"Pod\",\"names\":[\"b\",\"a\"]},"
      + "{\"apiGroup\":\"apps\",\"kind\":\"Deployment\",\"names\":[\"web\"]}]";

  @Test
  void claimsAreReadAndWrittenInTheRevisionsOrder() {
    RevisionClaims claims = RevisionClaims.read(KubeJson.mapper().readTree(CHILDREN));

    assertThat(claims.children()).containsExactly(new ClaimedChild("", "Pod", "b"), new ClaimedChild("", "Pod", "a"),
        new ClaimedChild("apps", "Deployment", "web"));
    assertThat(claims.toJson().toString()).isEqualTo(CHILDREN);
  }

  @Test
  void aNewClaimJoinsItsKindAtTheEndAndARemovedOneLeavesNoEmptyKind() {
    RevisionClaims claims = RevisionClaims.read(KubeJson.mapper().readTree(CHILDREN))
        .with(new ClaimedChild("", "Pod", "c"))
        .with(new ClaimedChild("", "Pod", "c"))
        .without(new ClaimedChild("apps", "Deployment", "web"));

    assertThat(claims.toJson().toString()).isEqualTo("[{\"apiGroup\":\"\",\"kind\":\"Pod\",\"names\":[\"b\",\"a\","
        + "\"c\"]}]");
  }

  @Test
  void malformedEntriesClaimNothing() {
    RevisionClaims claims = RevisionClaims.read(KubeJson.mapper().readTree(
        "[{\"apiGroup\":\"\",\"names\":[\"x\"]},{\"kind\":\"Pod\",\"names\":[1,\"a\",\"a\"]},\"junk\"]"));

    assertThat(claims.children()).containsExactly(new ClaimedChild("", "Pod", "a"));
    assertThat(RevisionClaims.read(KubeJson.mapper().missingNode()).isEmpty()).isTrue();
    assertThat(new RevisionClaims(List.of()).toJson().toString()).isEqualTo("[]");
  }
}
