package dev.metareactor.http.tls;

import io.netty.buffer.ByteBufAllocator;
import javax.net.ssl.SSLContext;

/**
 * Run in a child JVM by {@link TlsMinimumTest}: prints the protocols a new client engine enables, first the JDK's
 * default ({@code jdk: ...}), then the hook client context's ({@code hook: ...}), comma-separated.
 */
public final class EnabledProtocols {

  private EnabledProtocols() {}

  public static void main(String[] args) throws Exception {
    System.out.println("jdk: " + String.join(",", SSLContext.getDefault().createSSLEngine().getEnabledProtocols()));
    System.out.println("hook: " + String.join(",",
        TlsMaterials.NONE.clientContext().newEngine(ByteBufAllocator.DEFAULT).getEnabledProtocols()));
  }
}
