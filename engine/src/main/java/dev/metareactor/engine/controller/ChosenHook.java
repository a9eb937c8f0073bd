package dev.metareactor.engine.controller;

import dev.metareactor.engine.api.HookSpec;
import dev.metareactor.engine.hook.HookCaller;
import dev.metareactor.engine.hook.SyncResponse;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A hook a sync may call, carried as one value.
 *
 * @param name its name in the controller object ({@code sync}, {@code finalize}, {@code map}...), for messages
 * @param caller calls it
 * @param spec its spec (version and {@code responseUnMarshallMode})
 * @param purpose what its answer is for, which decides how the sync treats it
 * @param shadow the shadow hook beside it ({@code metareactor.dev/shadow-<name>-url}), or {@code null}
 */
public record ChosenHook(String name, HookCaller caller, HookSpec spec, Purpose purpose, @Nullable Shadow shadow) {

  public ChosenHook {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(caller, "caller");
    Objects.requireNonNull(spec, "spec");
    Objects.requireNonNull(purpose, "purpose");
  }

  /** A hook without a shadow. */
  public ChosenHook(String name, HookCaller caller, HookSpec spec, Purpose purpose) {
    this(name, caller, spec, purpose, null);
  }

  /** What a hook's answer is for. */
  public enum Purpose {
    /**
     * The desired state ({@code sync}, a MapController's {@code map}): while the synced object is not being
     * deleted, its answer is held to the delete rules ({@link DeleteGuard}).
     */
    DESIRED_STATE,
    /**
     * The teardown before the finalizer goes ({@code finalize}): requests say {@code finalizing: true}, and an answer
     * saying {@code finalized: true} lets the finalizer go.
     */
    FINALIZE,
    /**
     * The teardown of what a unit of work left (a MapController's {@code tombstone}): deleting is what it is for, so
     * it is not held to the delete rules.
     */
    TEAR_DOWN
  }

  public HookSpec.HookVersion version() {
    return spec.version();
  }

  public SyncResponse.UnknownFields unknownFields() {
    return SyncResponse.UnknownFields.of(spec);
  }

  /** Whether this is the finalize hook: its requests say {@code finalizing: true}, its answers may say finalized. */
  public boolean finalizing() {
    return purpose == Purpose.FINALIZE;
  }
}
