package dev.metareactor.engine.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class DeleteGuardAnnotationTest {

  @Test
  void offUnlessTheControllerSaysTrue() {
    assertThat(DeleteGuardAnnotation.enabled(Map.of())).isFalse();
    assertThat(DeleteGuardAnnotation.enabled(Map.of(DeleteGuardAnnotation.KEY, "false"))).isFalse();
    assertThat(DeleteGuardAnnotation.enabled(Map.of(DeleteGuardAnnotation.KEY, "true"))).isTrue();
    assertThat(DeleteGuardAnnotation.enabled(Map.of(DeleteGuardAnnotation.KEY, " true\n"))).isTrue();
  }

  @Test
  void anythingElseIsAnInvalidControllerNamingTheAnnotation() {
    for (String bad : List.of("yes", "True", "1", "")) {
      assertThatThrownBy(() -> DeleteGuardAnnotation.enabled(Map.of(DeleteGuardAnnotation.KEY, bad)))
          .isInstanceOf(InvalidControllerException.class)
          .hasMessage("metadata.annotations[metareactor.dev/delete-guard]: must be \"true\" or \"false\", got \""
              + bad + "\"");
    }
  }
}
