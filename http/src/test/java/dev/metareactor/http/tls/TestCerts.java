package dev.metareactor.http.tls;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Certificates made with {@code openssl} at test time, so no private key is committed: a CA, a server certificate for
 * {@code localhost} and client certificates whose keys are in each PEM form Kubernetes Secrets carry.
 */
public final class TestCerts {

  /** A certificate and its key, as PEM text. */
  public record Pair(String certificatePem, String keyPem) {}

  private static TestCerts shared;

  private final Path dir;

  private TestCerts(Path dir) {
    this.dir = dir;
  }

  /** One set per test JVM, in a temporary directory removed when the JVM exits. */
  public static synchronized TestCerts shared() throws IOException, InterruptedException {
    if (shared == null) {
      Path dir = Files.createTempDirectory("metareactor-test-certs");
      Runtime.getRuntime().addShutdownHook(new Thread(() -> delete(dir)));
      shared = generate(dir);
    }
    return shared;
  }

  private static void delete(Path dir) {
    try (var files = Files.list(dir)) {
      for (Path file : (Iterable<Path>) files::iterator) {
        Files.deleteIfExists(file);
      }
      Files.deleteIfExists(dir);
    } catch (IOException e) {
      // best effort: a temporary directory
    }
  }

  /** Makes a CA, a server certificate for DNS name {@code localhost} and three client certificates. */
  static TestCerts generate(Path dir) throws IOException, InterruptedException {
    TestCerts certs = new TestCerts(dir);
    certs.openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
        "-keyout", "ca.key", "-out", "ca.crt", "-days", "2", "-subj", "/CN=metareactor test CA");
    Files.writeString(dir.resolve("server.ext"), "subjectAltName=DNS:localhost\nextendedKeyUsage=serverAuth\n");
    Files.writeString(dir.resolve("client.ext"), "extendedKeyUsage=clientAuth\n");
    certs.openssl("genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", "server.key");
    certs.sign("server", "/CN=localhost", "server.ext");
    certs.openssl("genrsa", "-traditional", "-out", "client-pkcs1.key", "2048");
    certs.sign("client-pkcs1", "/CN=client-pkcs1", "client.ext");
    certs.openssl("ecparam", "-name", "prime256v1", "-genkey", "-out", "client-sec1.key");
    certs.sign("client-sec1", "/CN=client-sec1", "client.ext");
    certs.openssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-out",
        "client-pkcs8.key");
    certs.sign("client-pkcs8", "/CN=client-pkcs8", "client.ext");
    certs.openssl("pkcs8", "-topk8", "-in", "client-pkcs8.key", "-passout", "pass:secret", "-out",
        "client-encrypted.key");
    return certs;
  }

  public String caPem() {
    return read("ca.crt");
  }

  public Pair server() {
    return new Pair(read("server.crt"), read("server.key"));
  }

  /** {@code pkcs1} (RSA), {@code sec1} (EC, with an EC PARAMETERS block first) or {@code pkcs8} (EC). */
  public Pair client(String keyForm) {
    return new Pair(read("client-" + keyForm + ".crt"), read("client-" + keyForm + ".key"));
  }

  public String encryptedKeyPem() {
    return read("client-encrypted.key");
  }

  private void sign(String name, String subject, String extensions) throws IOException, InterruptedException {
    openssl("req", "-new", "-key", name + ".key", "-subj", subject, "-out", name + ".csr");
    openssl("x509", "-req", "-in", name + ".csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial", "-days",
        "2", "-extfile", extensions, "-out", name + ".crt");
  }

  private void openssl(String... args) throws IOException, InterruptedException {
    List<String> command = new ArrayList<>(List.of("openssl"));
    command.addAll(List.of(args));
    Process process = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).start();
    String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!process.waitFor(60, TimeUnit.SECONDS) || process.exitValue() != 0) {
      throw new IOException("openssl " + String.join(" ", args) + " failed: " + output);
    }
  }

  private String read(String file) {
    try {
      return Files.readString(dir.resolve(file));
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }
}
