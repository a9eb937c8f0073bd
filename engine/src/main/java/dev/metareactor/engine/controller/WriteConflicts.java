package dev.metareactor.engine.controller;

import dev.metareactor.engine.kube.ApiException;
import java.util.Arrays;

/**
 * Whether a failed sync failed only because it wrote over a change it had not seen yet (HTTP 409): the object
 * moved on, its informer event is on the way, and the sync will simply run again. Such failures re-queue the key
 * without a {@code SyncError} Event; anything else is a real error.
 */
public final class WriteConflicts {

  private static final int MAX_CAUSES = 16;

  private WriteConflicts() {}

  public static boolean only(Throwable error) {
    Throwable current = error;
    for (int depth = 0; current != null && depth < MAX_CAUSES; depth++, current = current.getCause()) {
      if (current instanceof ApiException k) {
        return k.code() == 409;
      }
      if (current instanceof WriteBatch.WritesFailedException batch) {
        return batch.getSuppressed().length > 0 && Arrays.stream(batch.getSuppressed()).allMatch(WriteConflicts::only);
      }
    }
    return false;
  }
}
