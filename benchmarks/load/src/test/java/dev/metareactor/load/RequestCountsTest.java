package dev.metareactor.load;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RequestCountsTest {

  @TempDir
  Path dir;

  @Test
  void countsEachRequestOnceByVerbResourceAndFailureCode() throws Exception {
    Path log = dir.resolve("audit.log");
    Files.writeString(log, event("old", "create", "configmaps", "", "", 201, Instant.now().minusSeconds(60)));
    RequestCounts.AuditLog audit = new RequestCounts.AuditLog(log);
    RequestCounts.Mark mark = audit.mark();
    Instant now = Instant.now();
    append(log, event("a", "create", "configmaps", "", "", 201, now));
    append(log, event("b", "create", "configmaps", "", "", 409, now));
    append(log, event("c", "update", "loadparents", "bench.metareactor.dev", "status", 200, now));
    // A watch is logged when its response starts and when it ends: one request.
    append(log, event("d", "watch", "configmaps", "", "", 200, now));
    append(log, event("d", "watch", "configmaps", "", "", 200, now));
    append(log, "{\"auditID\":\"e\",\"verb\":\"get\",\"requestURI\":\"/apis?timeout=32s\","
        + "\"responseStatus\":{\"code\":200},\"requestReceivedTimestamp\":\"" + now + "\"}\n");

    assertThat(audit.since(mark).byRequest()).isEqualTo(Map.of(
        "create configmaps", 1L,
        "create configmaps (409)", 1L,
        "update loadparents.bench.metareactor.dev/status", 1L,
        "watch configmaps", 1L,
        "get /apis", 1L));
  }

  @Test
  void requestsReceivedBeforeTheMarkAreNotCountedEvenWhenWrittenAfterIt() throws Exception {
    Path log = dir.resolve("audit.log");
    Files.writeString(log, "");
    RequestCounts.AuditLog audit = new RequestCounts.AuditLog(log);
    RequestCounts.Mark mark = audit.mark();
    append(log, event("late", "create", "configmaps", "", "", 201, mark.time().minusMillis(5)));
    assertThat(audit.since(mark).total()).isZero();
  }

  @Test
  void writesCarryTheObjectsNameAndWhenTheApiServerReceivedAndAnsweredThem() throws Exception {
    Path log = dir.resolve("audit.log");
    Files.writeString(log, "");
    RequestCounts.AuditLog audit = new RequestCounts.AuditLog(log);
    RequestCounts.Mark mark = audit.mark();
    Instant received = Instant.now();
    Instant answered = received.plusMillis(640);
    append(log, named("u", "update", "p-00001-2", received, answered));
    append(log, named("s", "patch", "p-00001", received, answered));
    append(log, named("g", "get", "p-00001", received, answered));
    append(log, named("w", "watch", "", received, answered));

    assertThat(audit.writesSince(mark)).containsExactly(
        new RequestCounts.Write("p-00001-2", received, answered),
        new RequestCounts.Write("p-00001", received, answered));
  }

  private static String named(String id, String verb, String name, Instant received, Instant answered) {
    return "{\"auditID\":\"" + id + "\",\"verb\":\"" + verb + "\",\"objectRef\":{\"resource\":\"configmaps\","
        + "\"name\":\"" + name + "\"},\"responseStatus\":{\"code\":200},\"requestReceivedTimestamp\":\"" + received
        + "\",\"stageTimestamp\":\"" + answered + "\"}\n";
  }

  private static void append(Path log, String line) throws IOException {
    Files.writeString(log, line, StandardOpenOption.APPEND);
  }

  private static String event(String id, String verb, String resource, String group, String sub, int code,
      Instant received) {
    return "{\"auditID\":\"" + id + "\",\"verb\":\"" + verb + "\",\"objectRef\":{\"resource\":\"" + resource
        + "\",\"apiGroup\":\"" + group + "\",\"subresource\":\"" + sub + "\"},\"responseStatus\":{\"code\":" + code
        + "},\"requestReceivedTimestamp\":\"" + received + "\"}\n";
  }
}
