package dev.metareactor.examples.hello;

import dev.metareactor.http.HookServer;
import io.opentelemetry.api.trace.Span;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.JsonNodeFactory;
import tools.jackson.databind.node.ObjectNode;

/**
 * The hello-world sync hook ({@code examples/hello-world/hook.py}) in Java: for a {@code Hello} with
 * {@code spec.who}, one ConfigMap {@code <parent>-greeting} with {@code data.greeting = "Hello, <who>!"}, and the
 * status {@code {greeting, observedChildren}}.
 *
 * <p>{@code java -jar hello-hook.jar [PORT]} serves {@code POST http://127.0.0.1:PORT/sync} (default port 8080).
 *
 * <p>With {@code OTEL_TRACES_EXPORTER} or {@code OTEL_EXPORTER_OTLP_ENDPOINT} set, each call is a span that continues
 * the engine's trace ({@code metareactor --tracing} sends {@code traceparent}), exported as the {@code OTEL_*}
 * environment says (OTLP over HTTP by default); see {@link HelloTracing}.
 */
public final class HelloHook {

  private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

  private HelloHook() {}

  /** What this hook reads from a sync request; everything else in it (related objects, ...) is ignored. */
  record Hello(String name, String who, int observedChildren) {

    static Hello from(JsonNode request) {
      JsonNode parent = request.path("parent");
      return new Hello(
          parent.path("metadata").path("name").asString(),
          parent.path("spec").path("who").asString("World"),
          // Children come grouped by "<Kind>.<apiVersion>", each group a map from name to object.
          request.path("children").path("ConfigMap.v1").size());
    }

    String greeting() {
      return "Hello, " + who + "!";
    }
  }

  /**
   * The desired state for one parent. It is the whole ConfigMap every time, never a diff: the engine compares it
   * with what exists and creates or updates (InPlace) the child, and its owner reference lets the garbage collector
   * delete the child with the parent.
   */
  static JsonNode sync(JsonNode request) {
    Hello hello = Hello.from(request);
    // The call's span (a no-op one when not traced): what this hook adds to the engine's trace.
    Span.current().setAttribute("hello.who", hello.who());
    ObjectNode response = NODES.objectNode();
    ObjectNode configMap = response.putArray("children").addObject()
        .put("apiVersion", "v1")
        .put("kind", "ConfigMap");
    configMap.putObject("metadata").put("name", hello.name() + "-greeting");
    configMap.putObject("data").put("greeting", hello.greeting());
    response.putObject("status")
        .put("greeting", hello.greeting())
        .put("observedChildren", hello.observedChildren());
    return response;
  }

  public static void main(String[] args) throws InterruptedException {
    if (args.length > 1 || (args.length == 1 && !args[0].matches("\\d{1,5}"))) {
      System.err.println("usage: java -jar hello-hook.jar [PORT]");
      System.exit(2);
    }
    int port = args.length == 1 ? Integer.parseInt(args[0]) : 8080;
    // sync() builds a small JSON object and does not block, so it may run on the event loop (route, not routeAsync).
    HookServer.Builder builder = HookServer.builder().port(port).route("/sync", HelloHook::sync);
    HelloTracing.fromEnvironment().ifPresent(builder::tracing);
    HookServer server = builder.start();
    // On SIGTERM or Ctrl-C, let requests in flight finish before the JVM exits.
    Runtime.getRuntime().addShutdownHook(new Thread(server::close, "hello-hook-shutdown"));
    System.err.println("hello-hook: serving " + server.url("/sync"));
    // The server's event-loop threads are daemons: keep the JVM alive until it is told to stop.
    Thread.currentThread().join();
  }
}
