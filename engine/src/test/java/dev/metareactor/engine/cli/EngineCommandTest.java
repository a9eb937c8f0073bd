package dev.metareactor.engine.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.metareactor.engine.config.ApplyStrategy;
import dev.metareactor.engine.config.EngineOptions;
import dev.metareactor.engine.config.ListenAddress;
import dev.metareactor.engine.config.LogSettings;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class EngineCommandTest {

  private final StringWriter out = new StringWriter();
  private final StringWriter err = new StringWriter();
  private final AtomicReference<EngineOptions> parsed = new AtomicReference<>();

  private int run(String... args) {
    return EngineCommand.execute(args, options -> {
      parsed.set(options);
      return 0;
    }, new PrintWriter(out, true), new PrintWriter(err, true));
  }

  @Test
  void defaultsAreMetacontrollers() {
    assertThat(run()).isZero();
    EngineOptions options = parsed.get();
    assertThat(options.discoveryInterval()).isEqualTo(Duration.ofSeconds(30));
    assertThat(options.cacheFlushInterval()).isEqualTo(Duration.ofMinutes(30));
    assertThat(options.metricsAddress()).isEqualTo(new ListenAddress("", 9999, true));
    assertThat(options.healthProbeAddress()).isEqualTo(new ListenAddress("", 8081, true));
    assertThat(options.profilingAddress().enabled()).as("--pprof-address=0, as upstream").isFalse();
    assertThat(options.workers()).isEqualTo(5);
    assertThat(options.eventRate().qps()).isEqualTo(1.0 / 300);
    assertThat(options.eventRate().burst()).isEqualTo(25);
    assertThat(options.leaderElection().enabled()).isFalse();
    assertThat(options.leaderElection().resourceLock()).isEqualTo("leases");
    assertThat(options.leaderElection().id()).isEqualTo("metacontroller");
    assertThat(options.targetLabelSelector()).isEmpty();
    assertThat(options.applyStrategy()).isEqualTo(ApplyStrategy.DYNAMIC_APPLY);
    assertThat(options.ssaFieldManager()).isEqualTo("metacontroller");
    assertThat(options.logging().level()).isEqualTo("INFO");
    assertThat(options.logging().json()).isTrue();
    // Our own defaults: a higher client rate (see docs/operations.md) and client-go's retry limiter.
    assertThat(options.apiRate().qps()).isEqualTo(50);
    assertThat(options.apiRate().burst()).isEqualTo(100);
    assertThat(options.retry().baseDelay()).isEqualTo(Duration.ofMillis(5));
    assertThat(options.retry().maxDelay()).isEqualTo(Duration.ofSeconds(1000));
    assertThat(options.retry().overall().qps()).isEqualTo(10);
    assertThat(options.retry().overall().burst()).isEqualTo(100);
    assertThat(options.hookMaxResponseSize()).isEqualTo(8L << 20);
  }

  @Test
  void sizesTakeKubernetesBinarySuffixes() {
    assertThat(run("--hook-max-response-size=512Ki")).isZero();
    assertThat(parsed.get().hookMaxResponseSize()).isEqualTo(512L << 10);
    assertThat(run("--hook-max-response-size=1000")).isZero();
    assertThat(parsed.get().hookMaxResponseSize()).isEqualTo(1000);
    assertThat(run("--hook-max-response-size=1Gi")).isZero();
    assertThat(parsed.get().hookMaxResponseSize()).isEqualTo(1L << 30);
  }

  @Test
  void acceptsGoFlagSpellingsAsInUpstreamManifests() {
    assertThat(run("--zap-log-level=4", "--discovery-interval=20s", "-workers=16", "--leader-election",
        "--apply-strategy", "server-side-apply", "--metrics-address=127.0.0.1:0", "--health-probe-bind-address=0",
        "--events-qps=0.5", "--client-go-qps=5", "--client-go-burst=10", "--target-label-selector=foo=bar",
        "--zap-devel=false", "--cache-flush-interval=1h30m", "--pprof-address=127.0.0.1:6060")).isZero();
    EngineOptions options = parsed.get();
    assertThat(options.logging().level()).isEqualTo("DEBUG");
    assertThat(options.discoveryInterval()).isEqualTo(Duration.ofSeconds(20));
    assertThat(options.workers()).isEqualTo(16);
    assertThat(options.leaderElection().enabled()).isTrue();
    assertThat(options.applyStrategy()).isEqualTo(ApplyStrategy.SERVER_SIDE_APPLY);
    assertThat(options.metricsAddress()).isEqualTo(new ListenAddress("127.0.0.1", 0, true));
    assertThat(options.healthProbeAddress().enabled()).isFalse();
    assertThat(options.eventRate().qps()).isEqualTo(0.5);
    assertThat(options.apiRate()).extracting("qps", "burst").containsExactly(5.0, 10);
    assertThat(options.targetLabelSelector()).isEqualTo("foo=bar");
    assertThat(options.cacheFlushInterval()).isEqualTo(Duration.ofMinutes(90));
    assertThat(options.profilingAddress()).isEqualTo(new ListenAddress("127.0.0.1", 6060, true));
  }

  @Test
  void devFlagsMatchTheDevOverlay() {
    assertThat(run("--zap-devel", "--zap-log-level=5", "--discovery-interval=5s")).isZero();
    assertThat(parsed.get().logging().level()).isEqualTo("TRACE");
    assertThat(parsed.get().logging().json()).isFalse();
  }

  @Test
  void theTimeOfJsonLinesFollowsZapTimeEncoding() {
    assertThat(run()).isZero();
    assertThat(parsed.get().logging().time()).isEqualTo(LogSettings.TimeEncoding.RFC3339);
    assertThat(run("--zap-time-encoding=rfc3339nano")).isZero();
    assertThat(parsed.get().logging().time()).isEqualTo(LogSettings.TimeEncoding.RFC3339_NANO);
    assertThat(run("--zap-time-encoding", "epoch")).isZero();
    assertThat(parsed.get().logging().time()).isEqualTo(LogSettings.TimeEncoding.EPOCH);
  }

  @Test
  void stackTracesStartAtZapStacktraceLevelWhichDefaultsAsControllerRuntimes() {
    assertThat(run()).isZero();
    assertThat(parsed.get().logging().stacktraceLevel()).isEqualTo("ERROR");
    assertThat(run("--zap-devel")).isZero();
    assertThat(parsed.get().logging().stacktraceLevel()).as("development mode").isEqualTo("WARN");
    assertThat(run("--zap-stacktrace-level=info")).isZero();
    assertThat(parsed.get().logging().stacktraceLevel()).isEqualTo("INFO");
    assertThat(run("-zap-stacktrace-level", "panic")).isZero();
    assertThat(parsed.get().logging().stacktraceLevel()).as("the engine never logs at panic").isEqualTo("OFF");
  }

  @ParameterizedTest
  @ValueSource(strings = {
      "--workers=0", "--workers=many", "--discovery-interval=10", "--discovery-interval=-5s",
      "--metrics-address=9999", "--pprof-address=6060", "--events-qps=0", "--events-qps=1/0",
      "--apply-strategy=kubectl",
      "--zap-log-level=loud", "--zap-encoder=xml", "--zap-time-encoding=sundial", "--zap-stacktrace-level=3",
      "--leader-election-resource-lock=configmaps",
      "--retry-max-delay=1ms", "--no-such-flag", "--client-go-burst=0", "--hook-max-response-size=8MB",
      "--hook-max-response-size=0", "--hook-max-response-size=4Gi"})
  void badValuesExitTwoWithOneLine(String arg) {
    assertThat(run(arg)).isEqualTo(EngineCommand.USAGE_ERROR);
    assertThat(parsed.get()).isNull();
    String message = err.toString();
    assertThat(message).startsWith("metareactor: ").endsWith("(see --help)" + System.lineSeparator());
    assertThat(message.strip()).doesNotContain("\n");
  }

  @Test
  void parseGivesTheSameOptionsAsTheCommandLineAndRejectsWhatItRejects() {
    assertThat(run("--workers=7", "--target-label-selector=team=a")).isZero();
    assertThat(EngineCommand.parse("--workers=7", "--target-label-selector=team=a")).isEqualTo(parsed.get());
    assertThatThrownBy(() -> EngineCommand.parse("--workers=many"))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("--workers");
    assertThatThrownBy(() -> EngineCommand.parse("--workers=0"))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("--workers must be at least 1");
  }

  @Test
  void helpListsEveryFlagWithItsDefault() {
    assertThat(run("--help")).isZero();
    String help = out.toString();
    for (String flag : new String[] {"--kubeconfig", "--discovery-interval", "--cache-flush-interval",
        "--metrics-address", "--health-probe-bind-address", "--client-go-qps", "--client-go-burst", "--workers",
        "--events-qps", "--events-burst", "--pprof-address", "--leader-election", "--leader-election-resource-lock",
        "--leader-election-namespace", "--leader-election-id", "--target-label-selector", "--apply-strategy",
        "--apply-strategy-ssa-field-manager", "--zap-log-level", "--zap-devel", "--zap-encoder", "--retry-base-delay",
        "--retry-max-delay", "--retry-qps", "--retry-burst", "--api-concurrency", "--hook-max-response-size",
        "--shutdown-timeout", "--hot-loop-repeats", "--hot-loop-window", "--hot-loop-max-hold"}) {
      assertThat(help).contains(flag);
    }
    assertThat(help).contains("default: 30s").contains("default: :9999").contains("default: 1/300");
    assertThat(parsed.get()).isNull();
  }
}
