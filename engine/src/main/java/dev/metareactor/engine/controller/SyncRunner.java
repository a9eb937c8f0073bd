package dev.metareactor.engine.controller;

import dev.metareactor.engine.controller.related.RelatedObjects;
import dev.metareactor.engine.events.EventRecorder;
import dev.metareactor.engine.hook.RetryAfterException;
import dev.metareactor.engine.kube.WriteFence;
import dev.metareactor.engine.queue.Causes;
import dev.metareactor.engine.queue.Outcome;
import dev.metareactor.engine.queue.Trigger;
import dev.metareactor.engine.shard.Handover;
import dev.metareactor.engine.tracing.SyncCauses;
import dev.metareactor.engine.tracing.SyncTrace;
import dev.metareactor.engine.tracing.Tracing;
import dev.metareactor.http.AnswerScope;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanBuilder;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.context.Context;
import java.time.Duration;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.spi.LoggingEventBuilder;
import reactor.core.publisher.Mono;

/**
 * Runs one sync of one key to the work queue's outcome, never to an error: a failure records a Warning
 * {@code SyncError} ({@code Sync error: ...}) on the object and backs it off; a 429, a write conflict, a related
 * informer still filling its cache and a parent handed over before its owned objects are cached re-queue it without
 * an Event; a replica the {@link WriteFence} refuses calls no hook; a parent the {@link HotLoopGuard} holds back
 * calls no hook either and comes back when the hold is over ({@code RETRY_AFTER}), unless the run is for a change of
 * its spec or a sync asked for. Each run is counted and timed in
 * {@link SyncMetrics}, and its log lines carry {@code controller}, {@code kind}, {@code key} and {@code sync} (the
 * run's number in this process) as fields of their own, so that a log query can follow one parent or one run.
 *
 * @param <K> the work-queue key
 */
final class SyncRunner<K extends SyncKey> {

  /** Numbers the syncs of the process, for their log lines. */
  private static final AtomicLong SYNC_RUNS = new AtomicLong();

  private final Logger log;
  private final String kind;
  private final String name;
  private final ObjectSync<K> sync;
  private final SyncMetrics metrics;
  private final WriteFence fence;
  private final EventRecorder events;
  private final @Nullable SyncRecorder recorder;
  private final @Nullable RecentSyncs recent;
  private final Tracing tracing;
  /** Whether the last sync was refused by the {@link WriteFence} (logged at info once, not for every key). */
  private final AtomicBoolean fenced = new AtomicBoolean();

  /**
   * @param log the controller's logger
   * @param kind the controller object's kind
   * @param name the controller object's name
   */
  SyncRunner(Logger log, String kind, String name, ObjectSync<K> sync, SyncMetrics metrics, WriteFence fence,
      EventRecorder events) {
    this(log, kind, name, sync, metrics, fence, events, null, Tracing.OFF, null);
  }

  /**
   * @param recorder records each run ({@code --record-syncs}), or {@code null}
   * @param tracing traces each run ({@code --tracing}), or {@link Tracing#OFF}
   * @param recent keeps each run in the ring of recent syncs, or {@code null}
   */
  SyncRunner(Logger log, String kind, String name, ObjectSync<K> sync, SyncMetrics metrics, WriteFence fence,
      EventRecorder events, @Nullable SyncRecorder recorder, Tracing tracing, @Nullable RecentSyncs recent) {
    this.recorder = recorder;
    this.recent = recent != null && recent.on() ? recent : null;
    this.tracing = Objects.requireNonNull(tracing, "tracing");
    this.log = Objects.requireNonNull(log, "log");
    this.kind = Objects.requireNonNull(kind, "kind");
    this.name = Objects.requireNonNull(name, "name");
    this.sync = Objects.requireNonNull(sync, "sync");
    this.metrics = Objects.requireNonNull(metrics, "metrics");
    this.fence = Objects.requireNonNull(fence, "fence");
    this.events = Objects.requireNonNull(events, "events");
  }

  /**
   * One run of {@code key}, for {@code causes} (what the work queue coalesced into it: logged at debug, and a
   * traced run's {@code metareactor.sync.causes}); whatever happens ends in an outcome for the queue.
   */
  Mono<Outcome> run(K key, Causes causes) {
    return run(key, causes, error -> { });
  }

  /**
   * One run of {@code key} as {@link #run(SyncKey, Causes)}; {@code failed} is told of the error a failed run ended
   * on (a {@link RelatedObjects.NotSyncedException} among them: the run may be tried again shortly).
   */
  Mono<Outcome> run(K key, Causes causes, Consumer<Throwable> failed) {
    return tracing.on()
        ? traced(key, causes, span -> span.setAttribute("metareactor.sync.causes", causes.toString()), failed)
        : recorded(key, causes, failed);
  }

  /**
   * One run of {@code key} in a span of its own, the root of the sync's trace: {@code sync <controller>}, with the
   * controller's kind and name, the key's namespace and name, what the queue knows of the run ({@code causes}) and,
   * when it ends, its outcome; a failure recorded as the span's error.
   */
  private Mono<Outcome> traced(K key, Causes queued, SyncCauses causes, Consumer<Throwable> failed) {
    return Mono.defer(() -> {
      SyncTrace root = new SyncTrace(tracing.tracer(), Context.root());
      SpanBuilder builder = root.child("sync " + name, SpanKind.INTERNAL)
          .setAttribute("metareactor.controller.kind", kind)
          .setAttribute("metareactor.controller.name", name)
          .setAttribute("k8s.namespace.name", key.namespace())
          .setAttribute("k8s.object.name", key.name())
          .setAttribute("metareactor.sync.key", key.toString())
          .setAttribute("metareactor.queue.wait_ms", queued.waitedNanos() / 1_000_000.0);
      causes.describe(builder);
      Span span = builder.startSpan();
      return root.traced(span, recorded(key, queued, failed.andThen(error -> SyncTrace.failed(span, error)))
          .doOnNext(outcome -> span.setAttribute("metareactor.sync.outcome", outcome.kind().name().toLowerCase(
              Locale.ROOT))));
    });
  }

  /**
   * One run of {@code key}, recorded with {@code --record-syncs} and kept in the ring of recent syncs; {@code failed}
   * is told of a failure.
   */
  private Mono<Outcome> recorded(K key, Causes causes, Consumer<Throwable> failed) {
    SyncRecorder recording = recorder;
    RecentSyncs keeping = recent;
    if (recording == null && keeping == null) {
      return attempt(key, causes, failed);
    }
    return Mono.defer(() -> {
      // Only --record-syncs keeps the hook's requests and answers; the ring keeps figures.
      SyncRecord record = recording != null ? SyncRecord.full() : SyncRecord.summary();
      long started = keeping != null ? keeping.now() : 0;
      AtomicReference<Throwable> failure = new AtomicReference<>();
      return attempt(key, causes, failed.andThen(failure::set))
          .doOnNext(outcome -> {
            if (recording != null) {
              recording.save(key, record, outcome, failure.get(), sync.shape().ownedField(),
                  sync.shape().otherAnswerFields());
            }
            if (keeping != null) {
              keeping.add(key, causes, started, record, outcome, failure.get());
            }
          })
          .contextWrite(SyncRecord.context(record));
    });
  }

  private Mono<Outcome> attempt(K key, Causes causes, Consumer<Throwable> failed) {
    long run = SYNC_RUNS.incrementAndGet();
    if (log.isDebugEnabled()) {
      syncLine(log.atDebug(), key, run).addKeyValue("causes", causes)
          .log("{} {}: syncing {} because: {}", kind, name, key, causes);
    }
    Optional<Duration> held = sync.heldBack(key, changedItself(causes));
    if (held.isPresent()) {
      // Its syncs went round in a loop (HotLoopGuard): no hook call until the hold is over or the parent changes.
      syncLine(log.atDebug(), key, run).log("{} {}: {} is held back {} ms more: its syncs went round in a loop",
          kind, name, key, held.get().toMillis());
      return Mono.just(Outcome.retryAfter(held.get()));
    }
    long start = metrics.started();
    // The hook answers of the run count against the hook client's memory budget until it ends: it holds them.
    return AnswerScope.around(Mono.defer(() -> {
          // A replica that may not act for its lease any more (a process stopped past it and woken up) does not
          // even call a hook: the parent may be another replica's by now.
          String refusal = fence.refusal();
          return refusal != null ? Mono.error(new WriteFence.Refused("hook call", refusal)) : sync.sync(key);
        }))
        .map(resyncAfter -> resyncAfter.map(Outcome::resyncAfter).orElseGet(Outcome::success))
        .doOnError(failed)
        .doOnNext(outcome -> fenced.set(false))
        .onErrorResume(WriteFence.Refused::in, e -> {
          // Said once until a sync goes through again; each key is retried after its backoff meanwhile.
          syncLine(fenced.compareAndSet(false, true) ? log.atInfo() : log.atDebug(), key, run)
              .log("{} {}: sync of {} stopped: {}", kind, name, key, e.getMessage());
          return Mono.just(Outcome.failed());
        })
        .onErrorResume(RetryAfterException.class, e -> {
          syncLine(log.atDebug(), key, run).log("{} {}: hook asked to retry {} after {}", kind, name, key, e.delay());
          return Mono.just(Outcome.retryAfter(e.delay()));
        })
        .onErrorResume(WriteConflicts::only, e -> {
          syncLine(log.atDebug(), key, run).log("{} {}: a write for {} conflicted with a newer change; syncing again",
              kind, name, key);
          return Mono.just(Outcome.failed());
        })
        .onErrorResume(RelatedObjects.NotSyncedException.class, e -> {
          syncLine(log.atDebug(), key, run).log("{} {}: {}; syncing {} again", kind, name, e.getMessage(), key);
          return Mono.just(Outcome.failed());
        })
        .onErrorResume(Handover.LaggingException.class, e -> {
          // Handed over from another shard: its owned objects' events are on their way (and re-queue it).
          syncLine(log.atDebug(), key, run).log("{} {}: {}; syncing {} once they are cached", kind, name,
              e.getMessage(), key);
          return Mono.just(Outcome.retryAfter(Handover.RECHECK));
        })
        .onErrorResume(e -> {
          reportSyncError(key, run, e);
          return Mono.just(Outcome.failed());
        })
        .doOnNext(outcome -> metrics.ended(start, switch (outcome.kind()) {
          case FAILED -> SyncMetrics.Result.ERROR;
          case RETRY_AFTER -> SyncMetrics.Result.REQUEUE;
          case SUCCESS -> outcome.after().isZero() ? SyncMetrics.Result.SUCCESS : SyncMetrics.Result.REQUEUE_AFTER;
          case CANCELLED -> SyncMetrics.Result.ERROR;
        }))
        .doOnCancel(() -> metrics.ended(start, SyncMetrics.Result.ERROR));
  }

  /** Whether the run is for a change of the key's object itself that may end a loop: its spec, or a sync asked for. */
  private static boolean changedItself(Causes causes) {
    return causes.kept().stream().anyMatch(trigger -> trigger.cause() == Trigger.Cause.SPEC
        || trigger.cause() == Trigger.Cause.SYNC_REQUESTED);
  }

  private LoggingEventBuilder syncLine(LoggingEventBuilder line, K key, long run) {
    return line.addKeyValue("controller", name).addKeyValue("kind", kind).addKeyValue("key", key.toString())
        .addKeyValue("sync", run);
  }

  private void reportSyncError(K key, long run, Throwable error) {
    String message = error.getMessage() == null ? error.getClass().getName() : error.getMessage();
    syncLine(log.atWarn(), key, run).log("{} {}: sync of {} failed: {}", kind, name, key, message);
    syncLine(log.atDebug(), key, run).setCause(error).log("{} {}: sync of {} failed", kind, name, key);
    sync.cached(key).ifPresent(object ->
        events.record(object, key.about(), EventRecorder.Type.Warning, "SyncError",
            "Sync error: " + key.about() + message));
  }
}
