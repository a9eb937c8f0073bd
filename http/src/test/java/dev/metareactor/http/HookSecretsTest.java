package dev.metareactor.http;

import static dev.metareactor.http.Fixtures.ROOT;
import static dev.metareactor.http.Fixtures.SYNC;
import static dev.metareactor.http.Fixtures.fail;
import static dev.metareactor.http.Fixtures.request;
import static dev.metareactor.http.Fixtures.succeed;
import static dev.metareactor.http.ScriptedServer.ok;
import static dev.metareactor.http.ScriptedServer.status;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.Tag;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

/**
 * A hook URL may carry secrets in its user info and query: they are used for the call and shown nowhere — not in
 * failures (which become Events and log lines), meters, circuit breaker names or configuration errors.
 */
class HookSecretsTest extends ScriptedHookTest {

  private static final List<String> SECRETS = List.of("alice", "s3cret", "t0k3n", "token=");

  private String secretUrl() {
    return "http://alice:s3cret@127.0.0.1:" + server.port() + "/sync?token=t0k3n";
  }

  private List<String> meterTexts() {
    return meters.getMeters().stream()
        .map(Meter::getId)
        .flatMap(id -> Stream.concat(Stream.of(id.getName()), id.getTags().stream().map(Tag::getValue)))
        .toList();
  }

  @Test
  void theUserInfoIsSentAsBasicAuthAndTheQueryAsIsButNeitherIsShown() {
    server = ScriptedServer.start(status(503, "down"));
    Hook hook = client.hook(WebhookSpec.of(secretUrl()), SYNC);

    HookCallException failure = fail(hook.call(request(), ROOT));

    ScriptedServer.Seen seen = server.requests().get(0);
    assertThat(seen.headers().get("Authorization")).as("as Go's client, so upstream, sends it")
        .isEqualTo("Basic YWxpY2U6czNjcmV0");
    assertThat(seen.uri()).isEqualTo("/sync?token=t0k3n");
    String shown = "http://127.0.0.1:" + server.port() + "/sync";
    assertThat(failure.getMessage()).startsWith("sync hook " + shown + ": ").doesNotContain(SECRETS);
    assertThat(hook.toString()).isEqualTo("sync hook " + shown);
    assertThat(meterTexts()).contains(shown).noneSatisfy(text -> assertThat(text).containsAnyOf(
        SECRETS.toArray(String[]::new)));
  }

  @Test
  void configuredCredentialsWinOverTheUserInfo() {
    server = ScriptedServer.start(ok("{}"));
    WebhookSpec spec = WebhookSpec.of(secretUrl()).withAuth(HookAuth.authorization(null, "configured"));

    succeed(client.hook(spec, SYNC).call(request(), ROOT));

    assertThat(server.requests().get(0).headers().get("Authorization")).isEqualTo("Bearer configured");
  }

  @Test
  void theShownUrlHasOnlySchemeHostPortAndPath() {
    assertThat(HookEndpoint.of("https://u:p@hooks.example.com:8443/a/b?token=x#frag").toString())
        .isEqualTo("https://hooks.example.com:8443/a/b");
    assertThat(HookEndpoint.of("http://user@[::1]/sync?k=v").redacted()).isEqualTo("http://[::1]/sync");
    assertThat(HookEndpoint.of("http://hooks.default/sync").redacted()).isEqualTo("http://hooks.default/sync");
    assertThat(HookEndpoint.of("http://alice:p%40ss@h/").userInfoAuth()).hasValue(HookAuth.basic("alice", "p@ss"));
    assertThat(HookEndpoint.of("http://alice@h/").userInfoAuth()).hasValue(HookAuth.basic("alice", ""));
    assertThat(HookEndpoint.of("http://h/").userInfoAuth()).isEmpty();
  }

  @Test
  void urlsThatCannotBeUsedAreNamedWithoutTheirSecrets() {
    for (String url : List.of("http://alice:s3cret@bad host/?token=t0k3n", "ftp://alice:s3cret@h/?token=t0k3n",
        "http://alice:s3cret@/path?token=t0k3n")) {
      assertThatThrownBy(() -> WebhookSpec.fromJson(JsonMapper.builder().build().readTree(
          "{\"url\": \"" + url + "\"}"))).isInstanceOf(InvalidWebhookException.class)
          .hasMessageStartingWith("invalid webhook config: url '").message().doesNotContain(SECRETS);
    }
    assertThat(HookEndpoint.redact("http://a:b@h:1/p?q#f")).isEqualTo("http://h:1/p");
    assertThat(HookEndpoint.redact("not a url at all")).isEqualTo("not a url at all");
  }

  @Test
  void credentialsOverPlainHttpAreNoticed() {
    HookAuth bearer = HookAuth.authorization(null, "t");
    assertThat(WebhookSpec.of("http://h/s").withAuth(bearer).sendsCredentialsInTheClear()).isTrue();
    assertThat(WebhookSpec.of("http://u:p@h/s").sendsCredentialsInTheClear()).isTrue();
    assertThat(WebhookSpec.of("https://h/s").withAuth(bearer).sendsCredentialsInTheClear()).isFalse();
    assertThat(WebhookSpec.of("https://u:p@h/s").sendsCredentialsInTheClear()).isFalse();
    assertThat(WebhookSpec.of("http://h/s?token=t").sendsCredentialsInTheClear()).as("a query is not credentials")
        .isFalse();
  }
}
