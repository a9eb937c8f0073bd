package dev.metareactor.engine.kube;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class ResourceVersionsTest {

  @Test
  void newerComparesTheIntegersAndNeverWhatIsNotOne() {
    assertThat(ResourceVersions.newer("12", "9")).isTrue();
    assertThat(ResourceVersions.newer("9", "12")).isFalse();
    assertThat(ResourceVersions.newer("12", "12")).isFalse();
    assertThat(ResourceVersions.newer("x", "1")).isFalse();
  }

  @Test
  void aVersionAsEtcdWritesItIsItsInteger() {
    assertThat(ResourceVersions.canonicalInteger("0")).isZero();
    assertThat(ResourceVersions.canonicalInteger("4711")).isEqualTo(4711);
    assertThat(ResourceVersions.canonicalInteger("999999999999999999")).isEqualTo(999_999_999_999_999_999L);
  }

  @Test
  void anythingElseIsNoInteger() {
    // A leading zero or a sign would make two different texts the same integer.
    assertThat(ResourceVersions.canonicalInteger("007")).isEqualTo(-1);
    assertThat(ResourceVersions.canonicalInteger("+7")).isEqualTo(-1);
    assertThat(ResourceVersions.canonicalInteger("-7")).isEqualTo(-1);
    assertThat(ResourceVersions.canonicalInteger("")).isEqualTo(-1);
    assertThat(ResourceVersions.canonicalInteger("12a")).isEqualTo(-1);
    assertThat(ResourceVersions.canonicalInteger("1234567890123456789")).isEqualTo(-1);
  }
}
