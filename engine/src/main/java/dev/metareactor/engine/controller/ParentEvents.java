package dev.metareactor.engine.controller;

import dev.metareactor.engine.events.EventRecorder;
import dev.metareactor.engine.kube.KubeObject;

/**
 * Where a sync's Kubernetes Events about the object it syncs go (the engine's {@link EventRecorder}: rate limited
 * per object, aggregated): the hook's own {@code events}, and a desired child another object controls. Must not
 * block.
 */
@FunctionalInterface
public interface ParentEvents {

  /** Records an Event about {@code object}. */
  void record(KubeObject object, EventRecorder.Type type, String reason, String message);
}
