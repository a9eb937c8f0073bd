package dev.metareactor.engine.controller;

import static org.assertj.core.api.Assertions.assertThat;

import dev.metareactor.engine.kube.ApiException;
import java.util.List;
import org.junit.jupiter.api.Test;

class WriteConflictsTest {

  private static ApiException status(int code) {
    return new ApiException(code, "", "status " + code, null);
  }

  @Test
  void aConflictAnywhereInTheCauseChainIsOnlyAConflict() {
    assertThat(WriteConflicts.only(status(409))).isTrue();
    assertThat(WriteConflicts.only(new IllegalStateException("can't update status", status(409)))).isTrue();
    assertThat(WriteConflicts.only(status(500))).isFalse();
    assertThat(WriteConflicts.only(new IllegalStateException("hook failed"))).isFalse();
  }

  @Test
  void aBatchIsOnlyConflictsWhenEveryFailureIs() {
    assertThat(WriteConflicts.only(new WriteBatch.WritesFailedException("can't claim children",
        List.of(status(409), new IllegalStateException("x", status(409)))))).isTrue();
    assertThat(WriteConflicts.only(new WriteBatch.WritesFailedException("can't claim children",
        List.of(status(409), status(422))))).isFalse();
  }
}
