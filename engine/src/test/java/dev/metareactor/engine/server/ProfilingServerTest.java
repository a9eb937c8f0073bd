package dev.metareactor.engine.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ProfilingServerTest {

  private final HttpClient http = HttpClient.newHttpClient();
  private ProfilingServer server;

  @BeforeEach
  void start() throws Exception {
    server = ProfilingServer.start(new InetSocketAddress(InetAddress.getByName("127.0.0.1"), 0));
  }

  @AfterEach
  void stop() {
    server.close();
  }

  @Test
  void aRecordingOfTheSecondsAskedForIsAJfrFileOfThisJvm(@TempDir Path dir) throws Exception {
    HttpResponse<Path> response = http.send(get("/debug/jfr?seconds=1"),
        HttpResponse.BodyHandlers.ofFile(dir.resolve("recording.jfr")));

    assertThat(response.statusCode()).isEqualTo(200);
    assertThat(response.headers().firstValue("content-type")).hasValue("application/octet-stream");
    List<RecordedEvent> events = RecordingFile.readAllEvents(response.body());
    assertThat(events).extracting(event -> event.getEventType().getName())
        .as("what JFR records of the JVM it runs in").contains("jdk.JVMInformation", "jdk.ActiveRecording");
    assertThat(events.stream().filter(event -> event.getEventType().getName().equals("jdk.JVMInformation"))
        .map(event -> event.getLong("pid")).findFirst()).hasValue(ProcessHandle.current().pid());
    try (var leftovers = Files.list(Path.of(System.getProperty("java.io.tmpdir")))) {
      assertThat(leftovers.map(Path::getFileName).map(Path::toString))
          .as("the recording's file, removed once sent").noneMatch(name -> name.matches("metareactor-\\d+\\.jfr"));
    }
  }

  @Test
  void oneRecordingAtATime() throws Exception {
    CompletableFuture<HttpResponse<byte[]>> first = http.sendAsync(get("/debug/jfr?seconds=3"),
        HttpResponse.BodyHandlers.ofByteArray());
    Thread.sleep(1000);

    HttpResponse<String> second = http.send(get("/debug/jfr?seconds=1"), HttpResponse.BodyHandlers.ofString());

    assertThat(second.statusCode()).isEqualTo(429);
    assertThat(first.get().statusCode()).isEqualTo(200);
    assertThat(http.send(get("/debug/jfr?seconds=1"), HttpResponse.BodyHandlers.ofByteArray()).statusCode())
        .as("once the first is done").isEqualTo(200);
  }

  @Test
  void aLengthOutsideOneSecondToFiveMinutesIsRefused() throws Exception {
    for (String seconds : List.of("0", "301", "ten", "-1")) {
      HttpResponse<String> response = http.send(get("/debug/jfr?seconds=" + seconds),
          HttpResponse.BodyHandlers.ofString());
      assertThat(response.statusCode()).as("seconds=%s", seconds).isEqualTo(400);
      assertThat(response.body()).contains("seconds");
    }
  }

  @Test
  void threadDumpsShowEveryThreadsStack() throws Exception {
    HttpResponse<String> response = http.send(get("/debug/threads"), HttpResponse.BodyHandlers.ofString());

    assertThat(response.statusCode()).isEqualTo(200);
    assertThat(response.body()).contains("\"main\" #1", "java.lang.Thread.State: ",
        "\tat dev.metareactor.engine.server.ProfilingServerTest.threadDumpsShowEveryThreadsStack");
  }

  @Test
  void itIsReadOnlyAndBoundToTheGivenAddressAlone() throws Exception {
    HttpResponse<String> post = http.send(HttpRequest.newBuilder(uri("/debug/jfr?seconds=1"))
        .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());

    assertThat(post.statusCode()).isEqualTo(404);
    assertThat(server.address().getAddress()).isEqualTo(InetAddress.getByName("127.0.0.1"));
  }

  private HttpRequest get(String path) {
    return HttpRequest.newBuilder(uri(path)).build();
  }

  private URI uri(String path) {
    return URI.create("http://127.0.0.1:" + server.address().getPort() + path);
  }
}
