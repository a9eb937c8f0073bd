package dev.metareactor.engine.kube;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class StoredJsonTest {

  private static final String BASE64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

  private static byte[] configMap(String payload) {
    String data = "{\"index\":\"0\",\"payload\":\"" + payload + "\",\"value\":\"v1\"}";
    String lastApplied = "{\"apiVersion\":\"v1\",\"data\":" + data + ",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":"
        + "\"p-0\",\"namespace\":\"ns\"}}";
    return ("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"p-0\",\"namespace\":\"ns\","
        + "\"uid\":\"0c3f1d6e-9a41-4f0e-8f7b-2c9d1e5a7b33\",\"resourceVersion\":\"184467\",\"annotations\":{"
        + "\"metacontroller.k8s.io/last-applied-configuration\":" + KubeJson.quote(lastApplied) + "}},\"data\":"
        + data + "}").getBytes(StandardCharsets.UTF_8);
  }

  private static String randomText(Random random, int length) {
    return randomText(random, length, BASE64);
  }

  private static String randomText(Random random, int length, String alphabet) {
    StringBuilder text = new StringBuilder(length);
    for (int i = 0; i < length; i++) {
      text.append(alphabet.charAt(random.nextInt(alphabet.length())));
    }
    return text.toString();
  }

  @Test
  void aChildWithItsLastAppliedCopyKeepsLessThanHalfOfItsBytes() {
    byte[] json = configMap(randomText(new Random(1), 256));
    StoredJson stored = StoredJson.of(json);
    assertThat(stored.deflated()).isTrue();
    assertThat(stored.length()).isEqualTo(json.length);
    // Random data does not compress, but its escaped copy in the annotation goes.
    assertThat(stored.storedSize()).isLessThan(json.length / 2);
    assertThat(stored.bytes()).isEqualTo(json);
  }

  @Test
  void smallJsonIsKeptAsItIs() {
    byte[] json = "{\"metadata\":{\"name\":\"a\"}}".getBytes(StandardCharsets.UTF_8);
    StoredJson stored = StoredJson.of(json);
    assertThat(stored.deflated()).isFalse();
    assertThat(stored.bytes()).isSameAs(json);
    assertThat(stored.storedSize()).isEqualTo(json.length);
  }

  @Test
  void jsonThatWouldNotShrinkByAQuarterIsKeptAsItIs() {
    // Printable ASCII but the quote and the backslash: about 6.5 bits a character, more than three quarters of 8.
    String printable = IntStream.rangeClosed(' ', '~').filter(c -> c != '"' && c != '\\')
        .collect(StringBuilder::new, StringBuilder::appendCodePoint, StringBuilder::append).toString();
    byte[] json = ("{\"data\":\"" + randomText(new Random(2), 2000, printable) + "\"}")
        .getBytes(StandardCharsets.UTF_8);
    StoredJson stored = StoredJson.of(json);
    assertThat(stored.deflated()).isFalse();
    assertThat(stored.bytes()).isSameAs(json);
  }

  @Test
  void copiesIntoABufferAtAnOffset() {
    byte[] json = configMap("é€𝄞 and some text ".repeat(20));
    StoredJson stored = StoredJson.of(json);
    assertThat(stored.deflated()).isTrue();
    byte[] buffer = new byte[json.length + 10];
    buffer[4] = 7;
    buffer[5 + json.length] = 9;
    stored.copyInto(buffer, 5);
    assertThat(buffer[4]).isEqualTo((byte) 7);
    assertThat(buffer[5 + json.length]).isEqualTo((byte) 9);
    assertThat(new String(buffer, 5, json.length, StandardCharsets.UTF_8))
        .isEqualTo(new String(json, StandardCharsets.UTF_8));
  }

  @Test
  void threadsDeflateAndInflateAtOnceWithoutMixingUp() throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(4);
    try {
      List<Future<Boolean>> results = new ArrayList<>();
      for (int t = 0; t < 8; t++) {
        int seed = t;
        results.add(pool.submit(() -> {
          Random random = new Random(seed);
          for (int i = 0; i < 500; i++) {
            byte[] json = configMap(randomText(random, 50 + random.nextInt(500)));
            if (!java.util.Arrays.equals(StoredJson.of(json).bytes(), json)) {
              return false;
            }
          }
          return true;
        }));
      }
      for (Future<Boolean> result : results) {
        assertThat(result.get()).isTrue();
      }
    } finally {
      pool.shutdownNow();
    }
  }
}
