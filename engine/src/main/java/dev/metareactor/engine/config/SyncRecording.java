package dev.metareactor.engine.config;

import java.nio.file.Path;
import java.util.Objects;
import java.util.Optional;

/**
 * {@code --record-syncs DIR} and {@code --record-syncs-max-size}: where the syncs of the controllers annotated
 * {@code metareactor.dev/record-syncs: "true"} are recorded (one JSON file per sync: the hook requests, the answers,
 * the writes made; see {@code controller/SyncRecorder}), and how many bytes each controller's directory may hold
 * before its oldest files go.
 *
 * @param dir the directory, or empty for no recording
 * @param maxBytesPerController the cap of each controller's directory
 */
public record SyncRecording(Optional<Path> dir, long maxBytesPerController) {

  /** No recording. */
  public static final SyncRecording OFF = new SyncRecording(Optional.empty(), 100L << 20);

  public SyncRecording {
    Objects.requireNonNull(dir, "dir");
    if (maxBytesPerController < 1) {
      throw new IllegalArgumentException("--record-syncs-max-size must be at least 1 byte, got "
          + maxBytesPerController);
    }
  }
}
