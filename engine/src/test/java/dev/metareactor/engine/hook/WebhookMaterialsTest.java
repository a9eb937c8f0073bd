package dev.metareactor.engine.hook;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.metareactor.engine.api.InvalidControllerException;
import dev.metareactor.engine.hook.WebhookMaterials.ObjectRef;
import dev.metareactor.http.HookEndpoint;
import dev.metareactor.http.WebhookSpec;
import java.net.URI;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.MissingNode;

class WebhookMaterialsTest {

  private static final JsonMapper JSON = JsonMapper.builder().build();
  private static final HookEndpoint HOOK = HookEndpoint.of("https://hooks.example.com/sync");
  private static final ObjectRef TOKEN = new ObjectRef(ObjectRef.Kind.SECRET, "ops", "token");

  private static JsonNode json(String text) {
    return JSON.readTree(text);
  }

  private static WebhookMaterials of(String webhook, String endpointConfigs) {
    return WebhookMaterials.of(json(webhook),
        endpointConfigs == null ? MissingNode.getInstance() : json(endpointConfigs), HOOK, "spec.hooks.sync.webhook");
  }

  @Test
  void theWebhooksOwnFieldsWinOverEndpointConfigsCompletely() {
    WebhookMaterials own = of("{\"authorization\":{\"secretRef\":"
        + "{\"name\":\"token\",\"namespace\":\"ops\",\"key\":\"t\"}}}",
        "[{\"host\":\"hooks.example.com\",\"caBundle\":{\"inline\":\"PEM\"}}]");
    assertThat(own.authorization()).isPresent();
    assertThat(own.caBundle()).as("not merged with the endpoint config").isEmpty();
    assertThat(own.references()).containsExactly(TOKEN);
  }

  @Test
  void endpointConfigsMatchByHostWithOrWithoutTheSchemesDefaultPort() {
    String configs = "[{\"host\":\"other.example.com\",\"caBundle\":{\"inline\":\"A\"}},"
        + "{\"host\":\"HOOKS.example.com:443\",\"caBundle\":{\"inline\":\"B\"}}]";
    assertThat(of("{}", configs).caBundle().orElseThrow().inline()).isEqualTo("B");
    assertThat(WebhookMaterials.hostMatches("hooks.example.com", URI.create("https://hooks.example.com:443/x")))
        .isTrue();
    assertThat(WebhookMaterials.hostMatches("hooks.example.com:443", URI.create("https://hooks.example.com/x")))
        .isTrue();
    assertThat(WebhookMaterials.hostMatches("hooks.example.com", URI.create("https://hooks.example.com:8443/x")))
        .isFalse();
    assertThat(WebhookMaterials.hostMatches("hooks.example.com:80", URI.create("http://hooks.example.com/x")))
        .isTrue();
    assertThat(of("{}", "[{\"host\":\"elsewhere\",\"caBundle\":{\"inline\":\"A\"}}]")).isEqualTo(WebhookMaterials.NONE);
  }

  @Test
  void blocksUpstreamRejectsAreInvalidControllers() {
    assertThatThrownBy(() -> of("{\"authorization\":{\"secretRef\":{\"name\":\"a\",\"namespace\":\"b\",\"key\":\"t\"}},"
        + "\"basicAuth\":{\"secretRef\":{\"name\":\"a\",\"namespace\":\"b\"}}}", null))
        .isInstanceOf(InvalidControllerException.class).hasMessageContaining("mutually exclusive");
    assertThatThrownBy(() -> of("{\"authorization\":{\"type\":\"basic\",\"secretRef\":"
        + "{\"name\":\"a\",\"namespace\":\"b\","
        + "\"key\":\"t\"}}}", null)).hasMessageContaining("use the basicAuth field instead");
    assertThatThrownBy(() -> of("{\"caBundle\":{\"inline\":\"x\",\"configMapRef\":"
        + "{\"name\":\"a\",\"namespace\":\"b\"}}}",
        null)).hasMessageContaining("exactly one of inline, secretRef and configMapRef");
    assertThatThrownBy(() -> of("{\"clientTLS\":{}}", null)).hasMessageContaining("clientTLS.secretRef: required");
    assertThatThrownBy(() -> of("{\"authorization\":{\"secretRef\":{\"name\":\"a\",\"namespace\":\"b\"}}}", null))
        .hasMessageContaining("authorization.secretRef.key: required");
  }

  @Test
  void materialIsReadFromTheReferencedObjectsWithUpstreamsDefaultKeys() {
    WebhookMaterials basic = of("{\"basicAuth\":{\"secretRef\":{\"name\":\"creds\",\"namespace\":\"ops\"}},"
        + "\"caBundle\":{\"configMapRef\":{\"name\":\"ca\",\"namespace\":\"ops\"}}}", null);
    WebhookSpec spec = basic.applyTo(WebhookSpec.of(HOOK), ref -> Optional.of(
        ref.kind() == ObjectRef.Kind.SECRET ? Map.of("username", "alice\n", "password", "s3cret\n")
            : Map.of("ca.crt", "CA-PEM")));
    assertThat(spec.auth().orElseThrow().headerValue()).isEqualTo("Basic YWxpY2U6czNjcmV0"); // alice:s3cret
    assertThat(spec.tls().caBundlePem()).isEqualTo("CA-PEM");

    WebhookMaterials bearer = of("{\"authorization\":{\"secretRef\":{\"name\":\"token\",\"namespace\":\"ops\","
        + "\"key\":\"t\"}}}", null);
    assertThat(bearer.applyTo(WebhookSpec.of(HOOK), ref -> Optional.of(Map.of("t", " abc \n"))).auth()
        .orElseThrow().headerValue()).isEqualTo("Bearer abc");
    assertThatThrownBy(() -> bearer.applyTo(WebhookSpec.of(HOOK), ref -> Optional.empty()))
        .isInstanceOf(WebhookMaterials.MaterialException.class)
        .hasMessage("can't resolve authorization: secret ops/token not found");
    assertThatThrownBy(() -> bearer.applyTo(WebhookSpec.of(HOOK), ref -> Optional.of(Map.of("other", "x"))))
        .hasMessage("can't resolve authorization: secret ops/token does not contain key \"t\"");
  }
}
