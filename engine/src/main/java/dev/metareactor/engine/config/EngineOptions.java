package dev.metareactor.engine.config;

import java.time.Duration;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * Everything the engine is configured with, built once from the command line and passed down through
 * constructors. Immutable and validated: an instance that exists is usable.
 *
 * @param kubeconfig path of a kubeconfig file; empty to use the in-cluster configuration (or the usual
 *     {@code KUBECONFIG} / {@code ~/.kube/config} lookup outside a cluster)
 * @param discoveryInterval how often API discovery is refreshed ({@code --discovery-interval})
 * @param cacheFlushInterval how often informers replay their cache to every controller
 *     ({@code --cache-flush-interval})
 * @param metricsAddress where {@code /metrics} is served ({@code --metrics-address})
 * @param healthProbeAddress where {@code /healthz} and {@code /readyz} are served
 *     ({@code --health-probe-bind-address})
 * @param profilingAddress where JDK Flight Recorder recordings and thread dumps are served on request
 *     ({@code --pprof-address}, where Metacontroller serves Go's pprof); disabled by default
 * @param apiRate client-side limit on API requests ({@code --client-go-qps}, {@code --client-go-burst})
 * @param workers concurrent syncs per hosted controller ({@code --workers})
 * @param eventRate Kubernetes Events per object ({@code --events-qps}, {@code --events-burst})
 * @param leaderElection {@code --leader-election*}
 * @param sharding {@code --sharding}, {@code --shard-name}
 * @param targetLabelSelector only host controller objects matching this label selector
 *     ({@code --target-label-selector}); empty for all
 * @param applyStrategy {@code --apply-strategy}
 * @param ssaFieldManager {@code --apply-strategy-ssa-field-manager}
 * @param logging {@code --zap-*}
 * @param retry per-parent backoff and overall retry rate ({@code --retry-*})
 * @param apiConcurrency blocking API calls in flight at once ({@code --api-concurrency})
 * @param hookMaxResponseSize the largest hook answer read, in bytes ({@code --hook-max-response-size}); it also bounds
 *     an answer's JSON tokens (one per 8 bytes) and the memory of all answers in flight together (16 times it), see
 *     {@code HookClientOptions#answerMemoryBytes()}
 * @param shutdownTimeout how long in-flight syncs may take to finish on SIGTERM ({@code --shutdown-timeout})
 * @param recording where syncs are recorded ({@code --record-syncs}), if anywhere
 * @param tracing whether syncs are traced ({@code --tracing}, {@code --tracing-sample-ratio})
 * @param hotLoops when a parent's syncs go round in a loop and how long it is held back ({@code --hot-loop-*})
 */
public record EngineOptions(
    String kubeconfig,
    Duration discoveryInterval,
    Duration cacheFlushInterval,
    ListenAddress metricsAddress,
    ListenAddress healthProbeAddress,
    ListenAddress profilingAddress,
    RateLimit apiRate,
    int workers,
    RateLimit eventRate,
    LeaderElectionSettings leaderElection,
    ShardingSettings sharding,
    String targetLabelSelector,
    ApplyStrategy applyStrategy,
    String ssaFieldManager,
    LogSettings logging,
    RetrySettings retry,
    int apiConcurrency,
    long hookMaxResponseSize,
    Duration shutdownTimeout,
    SyncRecording recording,
    TracingSettings tracing,
    HotLoopSettings hotLoops) {

  public EngineOptions {
    Objects.requireNonNull(kubeconfig, "kubeconfig");
    requirePositive(discoveryInterval, "--discovery-interval");
    requirePositive(cacheFlushInterval, "--cache-flush-interval");
    Objects.requireNonNull(metricsAddress, "metricsAddress");
    Objects.requireNonNull(healthProbeAddress, "healthProbeAddress");
    Objects.requireNonNull(profilingAddress, "profilingAddress");
    Objects.requireNonNull(apiRate, "apiRate");
    if (workers < 1) {
      throw new IllegalArgumentException("--workers must be at least 1, got " + workers);
    }
    Objects.requireNonNull(eventRate, "eventRate");
    Objects.requireNonNull(leaderElection, "leaderElection");
    Objects.requireNonNull(sharding, "sharding");
    if (sharding.enabled() && leaderElection.id().isBlank()) {
      throw new IllegalArgumentException("--sharding needs a --leader-election-id: it names the installation");
    }
    Objects.requireNonNull(targetLabelSelector, "targetLabelSelector");
    Objects.requireNonNull(applyStrategy, "applyStrategy");
    Objects.requireNonNull(ssaFieldManager, "ssaFieldManager");
    if (ssaFieldManager.isBlank()) {
      throw new IllegalArgumentException("--apply-strategy-ssa-field-manager must not be empty");
    }
    Objects.requireNonNull(logging, "logging");
    Objects.requireNonNull(retry, "retry");
    if (apiConcurrency < 1) {
      throw new IllegalArgumentException("--api-concurrency must be at least 1, got " + apiConcurrency);
    }
    if (hookMaxResponseSize < 1 || hookMaxResponseSize > Integer.MAX_VALUE - 8) {
      throw new IllegalArgumentException("--hook-max-response-size must be between 1 byte and 2 GiB, got "
          + hookMaxResponseSize);
    }
    Objects.requireNonNull(shutdownTimeout, "shutdownTimeout");
    Objects.requireNonNull(recording, "recording");
    Objects.requireNonNull(tracing, "tracing");
    Objects.requireNonNull(hotLoops, "hotLoops");
    if (shutdownTimeout.isNegative()) {
      throw new IllegalArgumentException("--shutdown-timeout must not be negative, got " + shutdownTimeout);
    }
  }

  /** An empty builder: every option must be set (the command line sets them all; see {@code EngineCommand}). */
  public static Builder builder() {
    return new Builder();
  }

  /** A builder holding these options, to change some by name: {@code options.toBuilder().workers(1).build()}. */
  public Builder toBuilder() {
    Builder builder = new Builder();
    builder.kubeconfig = kubeconfig;
    builder.discoveryInterval = discoveryInterval;
    builder.cacheFlushInterval = cacheFlushInterval;
    builder.metricsAddress = metricsAddress;
    builder.healthProbeAddress = healthProbeAddress;
    builder.profilingAddress = profilingAddress;
    builder.apiRate = apiRate;
    builder.workers = workers;
    builder.eventRate = eventRate;
    builder.leaderElection = leaderElection;
    builder.sharding = sharding;
    builder.targetLabelSelector = targetLabelSelector;
    builder.applyStrategy = applyStrategy;
    builder.ssaFieldManager = ssaFieldManager;
    builder.logging = logging;
    builder.retry = retry;
    builder.apiConcurrency = apiConcurrency;
    builder.hookMaxResponseSize = hookMaxResponseSize;
    builder.shutdownTimeout = shutdownTimeout;
    builder.recording = recording;
    builder.tracing = tracing;
    builder.hotLoops = hotLoops;
    return builder;
  }

  /**
   * Options by name, so that neighbours of the same type ({@code apiRate} and {@code eventRate}, the two addresses,
   * the two intervals) cannot be swapped without it showing. {@link #build()} validates as the constructor does.
   */
  public static final class Builder {
    private @Nullable String kubeconfig;
    private @Nullable Duration discoveryInterval;
    private @Nullable Duration cacheFlushInterval;
    private @Nullable ListenAddress metricsAddress;
    private @Nullable ListenAddress healthProbeAddress;
    /** Off unless asked for, as {@code --pprof-address}'s default {@code 0}. */
    private ListenAddress profilingAddress = ListenAddress.disabled();
    private @Nullable RateLimit apiRate;
    private int workers;
    private @Nullable RateLimit eventRate;
    private @Nullable LeaderElectionSettings leaderElection;
    private ShardingSettings sharding = ShardingSettings.OFF;
    private @Nullable String targetLabelSelector;
    private @Nullable ApplyStrategy applyStrategy;
    private @Nullable String ssaFieldManager;
    private @Nullable LogSettings logging;
    private @Nullable RetrySettings retry;
    private int apiConcurrency;
    private long hookMaxResponseSize;
    private @Nullable Duration shutdownTimeout;
    private SyncRecording recording = SyncRecording.OFF;
    private TracingSettings tracing = TracingSettings.OFF;
    private HotLoopSettings hotLoops = HotLoopSettings.DEFAULT;

    private Builder() {}

    public Builder kubeconfig(String kubeconfig) {
      this.kubeconfig = kubeconfig;
      return this;
    }

    public Builder discoveryInterval(Duration discoveryInterval) {
      this.discoveryInterval = discoveryInterval;
      return this;
    }

    public Builder cacheFlushInterval(Duration cacheFlushInterval) {
      this.cacheFlushInterval = cacheFlushInterval;
      return this;
    }

    public Builder metricsAddress(ListenAddress metricsAddress) {
      this.metricsAddress = metricsAddress;
      return this;
    }

    public Builder healthProbeAddress(ListenAddress healthProbeAddress) {
      this.healthProbeAddress = healthProbeAddress;
      return this;
    }

    public Builder profilingAddress(ListenAddress profilingAddress) {
      this.profilingAddress = profilingAddress;
      return this;
    }

    public Builder apiRate(RateLimit apiRate) {
      this.apiRate = apiRate;
      return this;
    }

    public Builder workers(int workers) {
      this.workers = workers;
      return this;
    }

    public Builder eventRate(RateLimit eventRate) {
      this.eventRate = eventRate;
      return this;
    }

    public Builder leaderElection(LeaderElectionSettings leaderElection) {
      this.leaderElection = leaderElection;
      return this;
    }

    public Builder sharding(ShardingSettings sharding) {
      this.sharding = sharding;
      return this;
    }

    public Builder targetLabelSelector(String targetLabelSelector) {
      this.targetLabelSelector = targetLabelSelector;
      return this;
    }

    public Builder applyStrategy(ApplyStrategy applyStrategy) {
      this.applyStrategy = applyStrategy;
      return this;
    }

    public Builder ssaFieldManager(String ssaFieldManager) {
      this.ssaFieldManager = ssaFieldManager;
      return this;
    }

    public Builder logging(LogSettings logging) {
      this.logging = logging;
      return this;
    }

    public Builder retry(RetrySettings retry) {
      this.retry = retry;
      return this;
    }

    public Builder apiConcurrency(int apiConcurrency) {
      this.apiConcurrency = apiConcurrency;
      return this;
    }

    public Builder hookMaxResponseSize(long hookMaxResponseSize) {
      this.hookMaxResponseSize = hookMaxResponseSize;
      return this;
    }

    public Builder shutdownTimeout(Duration shutdownTimeout) {
      this.shutdownTimeout = shutdownTimeout;
      return this;
    }

    public Builder recording(SyncRecording recording) {
      this.recording = recording;
      return this;
    }

    public Builder hotLoops(HotLoopSettings hotLoops) {
      this.hotLoops = hotLoops;
      return this;
    }

    public Builder tracing(TracingSettings tracing) {
      this.tracing = tracing;
      return this;
    }

    /** @throws IllegalArgumentException (or NullPointerException for an unset option) naming what is wrong */
    @SuppressWarnings("NullAway") // an unset option is null here: the constructor rejects it by name
    public EngineOptions build() {
      return new EngineOptions(kubeconfig, discoveryInterval, cacheFlushInterval, metricsAddress, healthProbeAddress,
          profilingAddress, apiRate, workers, eventRate, leaderElection, sharding, targetLabelSelector, applyStrategy,
          ssaFieldManager, logging, retry, apiConcurrency, hookMaxResponseSize, shutdownTimeout, recording,
          tracing, hotLoops);
    }
  }

  private static void requirePositive(Duration value, String flag) {
    Objects.requireNonNull(value, flag);
    if (value.isNegative() || value.isZero()) {
      throw new IllegalArgumentException(flag + " must be positive, got " + value);
    }
  }
}
