package dev.metareactor.engine.it;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * The host ports of the install files' pod ({@code :9999} for {@code /metrics}, {@code :8081} for the probes,
 * {@code :40000} for the debug overlay's debugger), held by a test class for all its tests: an {@link ImagePod}
 * shares the host's network, as do the engine's jar and upstream's binary run with a StatefulSet's arguments, so two
 * test JVMs running such classes at once (Failsafe's forks, or the builds of two checkouts) would fail to bind them
 * (ImageIT's pod did, beside ManifestsIT's engine). The class waits in
 * {@code @BeforeAll} for a lock on a file of the temporary directory, which the operating system releases when the
 * JVM ends, however it ends.
 *
 * <pre>{@code @ExtendWith(HostPorts.class) class SomeIT { ... }}</pre>
 */
public final class HostPorts implements BeforeAllCallback, AfterAllCallback {

  private static final Path LOCK = Path.of(System.getProperty("java.io.tmpdir"), "metareactor-host-ports.lock");
  private static final ExtensionContext.Namespace STORE = ExtensionContext.Namespace.create(HostPorts.class);

  @Override
  public void beforeAll(ExtensionContext context) throws IOException {
    FileChannel channel = FileChannel.open(LOCK, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
    try {
      context.getStore(STORE).put(FileLock.class, channel.lock());
    } catch (IOException | RuntimeException e) {
      channel.close();
      throw e;
    }
  }

  @Override
  public void afterAll(ExtensionContext context) throws IOException {
    FileLock lock = context.getStore(STORE).remove(FileLock.class, FileLock.class);
    if (lock != null) {
      // Closing the channel releases the lock.
      lock.channel().close();
    }
  }
}
