package dev.metareactor.http;

import static dev.metareactor.http.Fixtures.FAST;
import static dev.metareactor.http.Fixtures.START;
import static dev.metareactor.http.Fixtures.SYNC;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;

/** A hook client against a {@link ScriptedServer}, both closed after each test. */
abstract class ScriptedHookTest {

  protected final SimpleMeterRegistry meters = new SimpleMeterRegistry();
  protected final MutableClock clock = new MutableClock(START);
  protected HookClient client = HookClient.create(clientOptions(), meters, clock);
  protected ScriptedServer server;

  /** The client's options; {@link Fixtures#FAST} unless a test class says otherwise. */
  protected HookClientOptions clientOptions() {
    return FAST;
  }

  /** Replaces the client with one using these options. */
  protected void useOptions(HookClientOptions options) {
    client.close();
    client = HookClient.create(options, meters, clock);
  }

  /** Starts the server with this script and prepares a sync hook calling it. */
  protected Hook hook(UnaryOperator<WebhookSpec> spec, ScriptedServer.Reply... script) {
    server = ScriptedServer.start(script);
    return client.hook(spec.apply(WebhookSpec.of(server.url("/sync"))), SYNC);
  }

  @AfterEach
  void closeClientAndServer() {
    client.close();
    if (server != null) {
      server.close();
    }
  }
}
