package dev.metareactor.engine.controller;

import dev.metareactor.engine.kube.ApiResource;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.jspecify.annotations.Nullable;
import reactor.util.context.Context;
import reactor.util.context.ContextView;
import tools.jackson.databind.JsonNode;

/**
 * What one sync did, gathered while it runs for {@link SyncRecorder}: the requests it sent its hook with their
 * answers, and the writes it made. It travels in the sync's Reactor context ({@link #context}), where the sync's
 * hook calls ({@code ObjectSync}) and its writes ({@link SyncRecordingApi}) find it.
 */
public final class SyncRecord {

  private static final Object KEY = new Object();

  /** One request and its answer. */
  public record Exchange(JsonNode request, JsonNode answer) {}

  /** One write: its verb, the object's resource, namespace and name, and its result ({@code 2xx} or the code). */
  public record Write(String verb, ApiResource resource, String namespace, String name, String result) {}

  private final List<Exchange> exchanges = new CopyOnWriteArrayList<>();
  private final List<Write> writes = new CopyOnWriteArrayList<>();

  /** The context that carries {@code record} through a sync. */
  public static Context context(SyncRecord record) {
    return Context.of(KEY, record);
  }

  /** The record of the sync whose context this is, or {@code null} when it is not recorded. */
  public static @Nullable SyncRecord of(ContextView context) {
    return context.<SyncRecord>getOrEmpty(KEY).orElse(null);
  }

  void exchange(JsonNode request, JsonNode answer) {
    exchanges.add(new Exchange(request, answer));
  }

  void write(Write write) {
    writes.add(write);
  }

  public List<Exchange> exchanges() {
    return List.copyOf(exchanges);
  }

  public List<Write> writes() {
    return List.copyOf(writes);
  }
}
