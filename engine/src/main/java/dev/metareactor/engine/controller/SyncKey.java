package dev.metareactor.engine.controller;

/**
 * A work-queue key: the object one sync is about, by namespace ({@code ""} when cluster-scoped) and name. Each kind
 * of controller has its own key (a DecoratorController's also names the resource, since it targets several).
 */
public interface SyncKey {

  /** The object's namespace, {@code ""} for a cluster-scoped one. */
  String namespace();

  /** The object's name. */
  String name();

  /**
   * What a failed sync's {@code SyncError} Event says it was about, before the error, when that is more than the
   * object the Event is on (a MapController's input); empty otherwise.
   */
  default String about() {
    return "";
  }
}
