package dev.metareactor.engine.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;

/** The grammar of {@code metareactor.dev/cross-namespace-children}. */
class CrossNamespaceChildrenTest {

  private static CrossNamespaceChildren of(String value) {
    return CrossNamespaceChildren.of(Map.of(CrossNamespaceChildren.KEY, value));
  }

  @Test
  void absentEmptyOrFalseIsOff() {
    assertThat(CrossNamespaceChildren.of(Map.of())).isEqualTo(CrossNamespaceChildren.OFF);
    assertThat(of("")).isEqualTo(CrossNamespaceChildren.OFF);
    assertThat(of(" false ")).isEqualTo(CrossNamespaceChildren.OFF);
    assertThat(CrossNamespaceChildren.OFF.enabled()).isFalse();
    assertThat(CrossNamespaceChildren.OFF.allows("default")).isFalse();
  }

  @Test
  void aStarOrTrueAllowsEveryNamespace() {
    for (String any : new String[] {"*", "true", " * "}) {
      CrossNamespaceChildren allowed = of(any);
      assertThat(allowed.enabled()).isTrue();
      assertThat(allowed.allows("anything")).isTrue();
      assertThat(allowed).hasToString("*");
    }
  }

  @Test
  void aListAllowsItsNamespacesOnly() {
    CrossNamespaceChildren allowed = of("tools, shared ,monitoring");

    assertThat(allowed.enabled()).isTrue();
    assertThat(allowed.allows("shared")).isTrue();
    assertThat(allowed.allows("tools")).isTrue();
    assertThat(allowed.allows("default")).isFalse();
    assertThat(allowed).hasToString("monitoring,shared,tools");
  }

  @Test
  void aNameThatIsNoNamespaceNameIsAnErrorNamingTheAnnotation() {
    assertThatThrownBy(() -> of("shared,Team_A")).isInstanceOf(InvalidControllerException.class)
        .hasMessageStartingWith("metadata.annotations[metareactor.dev/cross-namespace-children]: must be \"*\" or a"
            + " comma-separated list of namespace names, but \"Team_A\" is not a DNS-1123 label");
    assertThatThrownBy(() -> of("shared,,tools")).isInstanceOf(InvalidControllerException.class)
        .hasMessageContaining("\"\" is empty");
  }
}
