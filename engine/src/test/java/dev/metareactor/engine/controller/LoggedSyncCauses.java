package dev.metareactor.engine.controller;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.metareactor.engine.controller.composite.CompositeController;
import dev.metareactor.engine.queue.Causes;
import dev.metareactor.engine.queue.Trigger;
import java.util.List;
import org.slf4j.LoggerFactory;

/**
 * The syncs a CompositeController logs at debug ({@link SyncRunner}: {@code syncing <key> because: <causes>}),
 * captured from its creation until {@link #close}, for a middle-tier test counting syncs and their causes.
 */
final class LoggedSyncCauses implements AutoCloseable {

  private final ListAppender<ILoggingEvent> lines = new ListAppender<>();
  private final Logger log = (Logger) LoggerFactory.getLogger(CompositeController.class);

  LoggedSyncCauses() {
    lines.start();
    log.addAppender(lines);
    log.setAdditive(false);
    log.setLevel(Level.DEBUG);
  }

  /** The lines of every sync logged so far, in order. */
  List<ILoggingEvent> syncs() {
    synchronized (lines) {
      return lines.list.stream().filter(line -> line.getMessage().contains("syncing {} because")).toList();
    }
  }

  /** The causes of every sync logged so far, in order. */
  List<List<Trigger.Cause>> causes() {
    return syncs().stream()
        .map(line -> ((Causes) line.getArgumentArray()[3]).kept().stream().map(Trigger::cause).toList())
        .toList();
  }

  @Override
  public void close() {
    log.detachAppender(lines);
    log.setLevel(null);
    log.setAdditive(true);
  }
}
