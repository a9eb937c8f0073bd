package dev.metareactor.engine.server;

import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.encoder.EncoderBase;

/** An encoder of log lines, one per event: zap writes no header or footer around them, and neither does this. */
abstract class LineEncoder extends EncoderBase<ILoggingEvent> {

  private static final byte[] NO_BYTES = new byte[0];

  @Override
  public final byte[] headerBytes() {
    return NO_BYTES;
  }

  @Override
  public final byte[] footerBytes() {
    return NO_BYTES;
  }
}
