package dev.metareactor.engine.faults;

import dev.metareactor.engine.it.EngineProcess;
import dev.metareactor.testing.k8s.LocalCluster;
import java.io.IOException;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestInstance.Lifecycle;

/**
 * A fault suite whose tests share one {@link FaultLoad} and one engine, made once for the class on its own cluster
 * (namespace): for faults the engine must come out of with the load converged, which is checked before each test,
 * so a fault that left either behind fails the next test as well as its own. The engine's log goes to
 * {@code target/fault-logs/<class>/engine.log}.
 */
@TestInstance(Lifecycle.PER_CLASS)
abstract class SharedLoadFaultSuite extends FaultSuite {

  /** The engine every test runs against, hosting the load's controllers and whatever a test adds. */
  EngineProcess engine;

  @BeforeAll
  void startTheLoadAndItsEngine(LocalCluster classCluster) throws IOException {
    makeLoad(classCluster, Path.of("target", "fault-logs", getClass().getSimpleName()));
    engine = convergedEngine("engine");
  }

  @AfterAll
  void stopTheEngineAndTheLoad() {
    try {
      if (engine != null) {
        engine.close();
      }
    } finally {
      if (load != null) {
        load.close();
      }
    }
  }

  /** Each test starts from the load converged and the engine ready. */
  @BeforeEach
  void converged() {
    awaitInvariants();
  }

  @Override
  final boolean sharesLoad() {
    return true;
  }
}
