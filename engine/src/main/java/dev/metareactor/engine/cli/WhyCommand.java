package dev.metareactor.engine.cli;

import dev.metareactor.engine.history.EngineFinder;
import dev.metareactor.engine.history.ParentRef;
import dev.metareactor.engine.history.SyncPages;
import dev.metareactor.engine.history.Timeline;
import dev.metareactor.engine.kube.ApiException;
import dev.metareactor.engine.kube.KubeApi;
import dev.metareactor.engine.kube.KubeConfig;
import dev.metareactor.engine.kube.KubeJson;
import dev.metareactor.engine.shard.ShardKeys;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.ZoneId;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicReference;
import org.jspecify.annotations.Nullable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;

/**
 * {@code metareactor why KIND/CONTROLLER [NAMESPACE/]PARENT}: the engine's recent syncs of one parent
 * ({@code /debug/syncs}) as a readable timeline, with what deserves a look flagged ({@link Timeline}). The engine is
 * found through the API server ({@link EngineFinder}) or named with {@code --engine URL}. Exit codes: 0 the timeline,
 * nothing flagged; 1 the timeline, something flagged (a hot loop, repeated failures, long queue waits); 2 no timeline
 * (a bad command line, no engine found or reachable, no sync of the parent kept).
 */
@Command(
    name = "metareactor why",
    mixinStandardHelpOptions = true,
    sortOptions = false,
    usageHelpAutoWidth = true,
    description = {"Shows why the engine synced a parent: its recent syncs, each with its causes, its wait in the "
        + "queue, its hook calls and the writes it made; and flags hot loops, repeated failures and long queue waits.",
        "Exit code: 0 nothing flagged, 1 something flagged, 2 no record (bad command line, no engine, parent not "
            + "kept)."})
public final class WhyCommand implements Callable<Integer> {

  /** Exit code: the timeline, nothing flagged. */
  public static final int CLEAN = 0;
  /** Exit code: the timeline, something flagged. */
  public static final int FLAGGED = 1;
  /** Exit code: no timeline. */
  public static final int ERROR = ToolCommand.ERROR;

  @Option(names = "--kubeconfig", paramLabel = "PATH", defaultValue = "",
      description = "Path to a kubeconfig; empty: KUBECONFIG or ~/.kube/config, else in-cluster.")
  String kubeconfig;

  @Option(names = "--engine", paramLabel = "URL", defaultValue = "",
      description = "The engine's metrics address (http://host:9999); empty: found through the API server from the "
          + "holder of its Lease (needs --leader-election or --sharding, and get on pods/proxy).")
  String engine;

  @Option(names = {"-n", "--namespace"}, paramLabel = "NS", defaultValue = "metacontroller",
      description = "The engine's namespace, where its Lease is (default: ${DEFAULT-VALUE}).")
  String namespace;

  @Option(names = "--leader-election-id", paramLabel = "NAME", defaultValue = "metacontroller",
      description = "The engine's --leader-election-id, its Lease's name (default: ${DEFAULT-VALUE}).")
  String leaseId;

  @Option(names = "--shard", paramLabel = "NAME", defaultValue = "",
      description = "With --sharding: ask this shard's Lease instead of the one the parent's label "
          + ShardKeys.PREFIX + "... names.")
  String shard;

  @Option(names = "--engine-port", paramLabel = "PORT", defaultValue = "0",
      description = "The engine's metrics port, to reach it through the API server; 0: the engine pod's container "
          + "port named metrics, else " + EngineFinder.DEFAULT_PORT + " (default: ${DEFAULT-VALUE}).")
  int port;

  @Option(names = "--hot-loop", paramLabel = "N", defaultValue = "10",
      description = "Flag more than N syncs a minute that wrote nothing (default: ${DEFAULT-VALUE}).")
  int hotLoop;

  @Option(names = "--long-wait", paramLabel = "DURATION", defaultValue = "1s",
      converter = EngineCommand.DurationConverter.class,
      description = "Flag a wait in the queue this long or longer (default: ${DEFAULT-VALUE}).")
  Duration longWait;

  @Option(names = {"-o", "--output"}, paramLabel = "FORMAT", defaultValue = "text",
      description = "text, or json: the engine's page as it is (default: ${DEFAULT-VALUE}).")
  String output;

  @Option(names = "--timeout", paramLabel = "DURATION", defaultValue = "10s",
      converter = EngineCommand.DurationConverter.class,
      description = "How long to wait for the engine (default: ${DEFAULT-VALUE}).")
  Duration timeout;

  @Parameters(index = "0", paramLabel = "KIND/CONTROLLER",
      description = "compositecontroller/NAME, decoratorcontroller/NAME or mapcontroller/NAME.")
  @Nullable String controller;

  @Parameters(index = "1", paramLabel = "[NAMESPACE/]PARENT",
      description = "The parent; no namespace for a cluster-scoped one.")
  @Nullable String parent;

  private final PrintWriter out;
  private final PrintWriter err;

  private WhyCommand(PrintWriter out, PrintWriter err) {
    this.out = out;
    this.err = err;
  }

  /** Parses {@code args} (what follows {@code why}) and runs; returns the exit code. */
  public static int execute(String[] args, PrintWriter out, PrintWriter err) {
    return ToolCommand.execute(new WhyCommand(out, err), "why", args, out, err);
  }

  @Override
  public Integer call() throws IOException, InterruptedException {
    if (!List.of("text", "json").contains(output)) {
      return fail(err, "-o must be text or json, got " + output);
    }
    if (hotLoop < 1) {
      return fail(err, "--hot-loop must be at least 1, got " + hotLoop);
    }
    ParentRef ref = parentRef(Objects.requireNonNull(controller), Objects.requireNonNull(parent));
    String page = SyncPages.path(ref);
    JsonNode found = engine.isBlank() ? throughApiServer(ref, page) : direct(page);
    if (found == null) {
      return ERROR;
    }
    if (output.equals("json")) {
      out.println(KubeJson.text(found));
      out.flush();
      return CLEAN;
    }
    Timeline timeline = new Timeline(ZoneId.systemDefault(), hotLoop, longWait);
    out.print(timeline.render(found));
    List<String> findings = timeline.findings(found);
    for (String finding : findings) {
      out.println("! " + finding);
    }
    out.flush();
    return findings.isEmpty() ? CLEAN : FLAGGED;
  }

  /** {@code compositecontroller/NAME} and {@code [NAMESPACE/]PARENT} as the ring files them. */
  static ParentRef parentRef(String controller, String parent) {
    int slash = controller.indexOf('/');
    String kind = slash <= 0 ? "" : controller.substring(0, slash).toLowerCase(Locale.ROOT);
    if (!List.of("compositecontroller", "decoratorcontroller", "mapcontroller").contains(kind)
        || slash == controller.length() - 1) {
      throw new IllegalArgumentException("the controller must be compositecontroller/NAME, decoratorcontroller/NAME "
          + "or mapcontroller/NAME, got " + controller);
    }
    int cut = parent.indexOf('/');
    if (parent.isEmpty() || cut == 0 || cut == parent.length() - 1 || parent.indexOf('/', cut + 1) >= 0) {
      throw new IllegalArgumentException("the parent must be NAMESPACE/NAME, or NAME when cluster-scoped, got "
          + parent);
    }
    return new ParentRef(kind, controller.substring(slash + 1), cut < 0 ? "" : parent.substring(0, cut),
        parent.substring(cut + 1));
  }

  private @Nullable JsonNode direct(String page) throws IOException, InterruptedException {
    URI uri = URI.create(engine.replaceAll("/+$", "") + "/" + page);
    // Java 17's HttpClient is not closeable: its threads go with the process, which ends right after.
    HttpClient http = HttpClient.newBuilder().connectTimeout(timeout).build();
    try {
      HttpResponse<String> answer = http.send(HttpRequest.newBuilder(uri).timeout(timeout).GET().build(),
          HttpResponse.BodyHandlers.ofString());
      return page(answer.statusCode(), answer.body(), uri.toString());
    } catch (IOException e) {
      fail(err, "cannot reach the engine at " + uri + ": " + ToolCommand.message(e));
      return null;
    }
  }

  private @Nullable JsonNode throughApiServer(ParentRef ref, String page) {
    EngineFinder finder = new EngineFinder(namespace, port);
    OwningLease owning = new OwningLease(leaseId);
    String given = owning.leaseOf(shard);
    AtomicReference<String> lease = new AtomicReference<>(given);
    try (KubeApi api = new KubeApi(KubeConfig.load(kubeconfig), 2)) {
      Mono<String> leaseName = shard.isBlank() ? owning.of(api, ref).doOnNext(lease::set) : Mono.just(given);
      return leaseName.flatMap(name -> finder.fetch(api, name, page)).block(timeout);
    } catch (RuntimeException e) {
      int code = ApiException.codeOf(e);
      if (code == 404 && e instanceof ApiException api && api.getMessage() != null
          && api.getMessage().contains("/leases/")) {
        fail(err, "no Lease " + namespace + "/" + lease.get() + ": the engine runs without --leader-election"
            + " (give --engine URL), or in another namespace (-n) or with another --leader-election-id");
        return null;
      }
      String body = e instanceof ApiException api ? api.getMessage() : null;
      fail(err, "cannot find the engine or read its page through the API server: " + (body != null ? body
          : ToolCommand.message(e)));
      return null;
    }
  }

  private @Nullable JsonNode page(int status, String body, String where) {
    JsonNode json;
    try {
      json = KubeJson.mapper().readTree(body);
    } catch (RuntimeException e) {
      fail(err, where + " answered " + status + " with no page: " + body.lines().findFirst().orElse(""));
      return null;
    }
    if (status != 200) {
      fail(err, json.path("error").asString(where + " answered " + status));
      return null;
    }
    return json;
  }

  private static int fail(PrintWriter err, String message) {
    return ToolCommand.fail(err, "why", message);
  }
}
