package dev.metareactor.engine.controller;

import dev.metareactor.engine.kube.ApiResource;
import dev.metareactor.http.AnswerBytes;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;
import reactor.util.context.Context;
import reactor.util.context.ContextView;
import tools.jackson.databind.JsonNode;

/**
 * What one sync did, gathered while it runs: for {@link SyncRecorder} ({@link #full}) the requests it sent its hook
 * with their answers and every write it made; for the engine's ring of recent syncs ({@link #summary}) only how many
 * hook calls it made, how long they took, how many bytes they answered, and its first {@value #SUMMARY_WRITES} writes
 * (the rest counted): no JSON kept. It travels in the sync's Reactor context ({@link #context}), where the sync's hook
 * calls ({@code ObjectSync}) and its writes ({@link SyncRecordingApi}) find it.
 */
public final class SyncRecord {

  /** How many writes a summary keeps. */
  public static final int SUMMARY_WRITES = 8;

  private static final Object KEY = new Object();

  /** One request and its answer. */
  public record Exchange(JsonNode request, JsonNode answer) {}

  /** One write: its verb, the object's resource, namespace and name, and its result ({@code 2xx} or the code). */
  public record Write(String verb, ApiResource resource, String namespace, String name, String result) {}

  private final boolean full;
  private final List<Exchange> exchanges = new CopyOnWriteArrayList<>();
  private final List<Write> writes = new CopyOnWriteArrayList<>();
  private final AtomicInteger writesLeftOut = new AtomicInteger();
  private final AtomicInteger hookCalls = new AtomicInteger();
  private final AtomicLong hookNanos = new AtomicLong();
  private final AnswerBytes answerBytes = new AnswerBytes();

  private SyncRecord(boolean full) {
    this.full = full;
  }

  /** A record of everything, for {@link SyncRecorder}. */
  public static SyncRecord full() {
    return new SyncRecord(true);
  }

  /** A record of the figures and the first writes only, for the ring of recent syncs. */
  public static SyncRecord summary() {
    return new SyncRecord(false);
  }

  /**
   * The context that carries {@code record} through a sync; the hook calls made under it count their answers' bytes
   * into it.
   */
  public static Context context(SyncRecord record) {
    return record.answerBytes.into(Context.of(KEY, record));
  }

  /** The record of the sync whose context this is, or {@code null} when it is not recorded. */
  public static @Nullable SyncRecord of(ContextView context) {
    return context.<SyncRecord>getOrEmpty(KEY).orElse(null);
  }

  /** A hook call that took {@code nanos}, answered or failed. */
  void hookCall(long nanos) {
    hookCalls.incrementAndGet();
    hookNanos.addAndGet(nanos);
  }

  void exchange(JsonNode request, JsonNode answer) {
    if (full) {
      exchanges.add(new Exchange(request, answer));
    }
  }

  void write(Write write) {
    if (full || writes.size() < SUMMARY_WRITES) {
      writes.add(write);
    } else {
      writesLeftOut.incrementAndGet();
    }
  }

  /** How many writes a summary did not keep. */
  public int writesLeftOut() {
    return writesLeftOut.get();
  }

  /** How many hook calls the sync made. */
  public int hookCalls() {
    return hookCalls.get();
  }

  /** How long its hook calls took together. */
  public long hookNanos() {
    return hookNanos.get();
  }

  /** How many bytes its hooks answered (answers from the ETag cache count none). */
  public long answerBytes() {
    return answerBytes.total();
  }

  public List<Exchange> exchanges() {
    return List.copyOf(exchanges);
  }

  public List<Write> writes() {
    return List.copyOf(writes);
  }
}
