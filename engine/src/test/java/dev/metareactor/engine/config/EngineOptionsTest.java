package dev.metareactor.engine.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.metareactor.engine.cli.EngineCommand;
import org.junit.jupiter.api.Test;

/** The options builder: changes what it is told by name, keeps the rest, validates as the constructor does. */
class EngineOptionsTest {

  private final EngineOptions defaults = EngineCommand.parse();

  @Test
  void toBuilderKeepsEveryOption() {
    assertThat(defaults.toBuilder().build()).isEqualTo(defaults);
  }

  @Test
  void changesOnlyTheNamedOptions() {
    EngineOptions changed = defaults.toBuilder().workers(1).eventRate(new RateLimit(2, 3)).build();

    assertThat(changed.workers()).isEqualTo(1);
    assertThat(changed.eventRate()).isEqualTo(new RateLimit(2, 3));
    assertThat(changed.apiRate()).isEqualTo(defaults.apiRate());
    assertThat(changed.toBuilder().workers(defaults.workers()).eventRate(defaults.eventRate()).build())
        .isEqualTo(defaults);
  }

  @Test
  void buildValidatesAsTheConstructorDoes() {
    assertThatThrownBy(() -> defaults.toBuilder().workers(0).build())
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("--workers");
    assertThatThrownBy(() -> EngineOptions.builder().build()).isInstanceOf(NullPointerException.class)
        .hasMessageContaining("kubeconfig");
  }
}
