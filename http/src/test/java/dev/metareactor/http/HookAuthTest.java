package dev.metareactor.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class HookAuthTest {

  @Test
  void authorizationDefaultsToBearerAndTrimsTheSecret() {
    assertThat(HookAuth.authorization(null, "  tok3n\n").headerValue()).isEqualTo("Bearer tok3n");
    assertThat(HookAuth.authorization("", "tok3n").headerValue()).isEqualTo("Bearer tok3n");
    assertThat(HookAuth.authorization("Token", "tok3n").headerValue()).isEqualTo("Token tok3n");
  }

  @Test
  void authorizationRefusesBasicAndEmptyCredentials() {
    assertThatThrownBy(() -> HookAuth.authorization("basic", "x")).isInstanceOf(InvalidWebhookException.class)
        .hasMessageContaining("use basicAuth");
    assertThatThrownBy(() -> HookAuth.authorization(null, " \n")).isInstanceOf(InvalidWebhookException.class)
        .hasMessageContaining("empty");
  }

  @Test
  void basicAuthEncodesUserAndPassword() {
    assertThat(HookAuth.basic("Aladdin", "open sesame").headerValue())
        .isEqualTo("Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==");
    assertThatThrownBy(() -> HookAuth.basic("a:b", "c")).isInstanceOf(InvalidWebhookException.class)
        .hasMessageContaining("':'");
  }

  @Test
  void headersAreOneLineAndNeverPrinted() {
    assertThatThrownBy(() -> new HookAuth("Bearer a\r\nX-Injected: 1")).isInstanceOf(InvalidWebhookException.class);
    assertThat(HookAuth.authorization(null, "s3cret").toString()).doesNotContain("s3cret").contains("Bearer");
  }
}
