package dev.metareactor.engine.kube;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.zip.DataFormatException;
import java.util.zip.Deflater;
import java.util.zip.Inflater;

/**
 * The JSON of a {@link KubeObject} as the engine keeps it: deflated when that saves at least a quarter of it, as it
 * is otherwise. Immutable.
 *
 * <p>Why: the informers' caches are most of the engine's heap at scale, and most of a cached object is JSON that is
 * read only when a hook request or an apply needs the whole object — a child that carries the last-applied annotation
 * holds its data twice, once escaped. Deflated against {@link #DICTIONARY} (the names and values most Kubernetes
 * objects share, so that a small object need not spell them out first), the load harness's child ConfigMap of 1.4 KB
 * keeps about 300 bytes, its parent of 450 bytes about 170; a child whose data does not compress at all still loses
 * the duplicate the annotation carries. The price is CPU: about 14 µs to deflate a child the API server sends and
 * 3 µs to inflate one a sync reads (KubeObjectBenchmark states it on its workloads).
 *
 * <p>Objects smaller than {@link #DEFLATE_FROM} bytes are kept as they are: they would save little, and the
 * metadata-only objects some informers cache are that small.
 *
 * <p>The codecs are raw deflate ({@code nowrap}: no zlib header or checksum, the bytes never leave the process), one
 * pair per thread, reset for each object.
 */
final class StoredJson {

  /** JSON shorter than this is kept as it is. */
  static final int DEFLATE_FROM = 256;

  /**
   * What both codecs start from, as if each object followed it: the names, and the values, that most objects share,
   * plain and escaped as a {@code last-applied-configuration} annotation holds them. Deflate finds a match the
   * nearer the end of the dictionary it is, so the most common come last. Changing it changes nothing stored: the
   * bytes live only as long as the process.
   */
  static final byte[] DICTIONARY = ("\"status\":{\"observedGeneration\":,\"conditions\":[{\"type\":\"Ready\","
      + "\"status\":\"True\",\"lastTransitionTime\":\"\",\"reason\":\"\",\"message\":\"\"}]},"
      + "\"spec\":{\"replicas\":,\"selector\":{\"matchLabels\":{\"app\":\"\"}},\"template\":{\"metadata\":"
      + "{\"labels\":{\"app.kubernetes.io/name\":\"\",\"app.kubernetes.io/instance\":\"\"}},\"spec\":{\"containers\":"
      + "[{\"name\":\"\",\"image\":\"\",\"ports\":[{\"containerPort\":,\"protocol\":\"TCP\"}],\"resources\":{}}]}}},"
      + "\"data\":{\"\":\"\"},"
      + "{\\\"apiVersion\\\":\\\"v1\\\",\\\"kind\\\":\\\"\\\",\\\"metadata\\\":{\\\"annotations\\\":{},"
      + "\\\"labels\\\":{\\\"\\\":\\\"\\\"},\\\"name\\\":\\\"\\\",\\\"namespace\\\":\\\"\\\"},\\\"spec\\\":{},"
      + "\\\"data\\\":{\\\"\\\":\\\"\\\"}}\"},"
      + "\"finalizers\":[\"\"],"
      + "\"ownerReferences\":[{\"apiVersion\":\"\",\"kind\":\"\",\"name\":\"\",\"uid\":\"\",\"controller\":true,"
      + "\"blockOwnerDeletion\":true}]},"
      + "{\"apiVersion\":\"v1\",\"kind\":\"\",\"metadata\":{\"name\":\"\",\"generateName\":\"\",\"namespace\":\"\","
      + "\"uid\":\"\",\"resourceVersion\":\"\",\"generation\":1,\"creationTimestamp\":\"2026-01-01T00:00:00Z\","
      + "\"deletionTimestamp\":\"\",\"labels\":{\"controller-uid\":\"\"},\"annotations\":"
      + "{\"metacontroller.k8s.io/last-applied-configuration\":\"")
      .getBytes(StandardCharsets.UTF_8);

  private static final ThreadLocal<Deflater> DEFLATER = ThreadLocal.withInitial(() -> new Deflater(6, true));
  private static final ThreadLocal<Inflater> INFLATER = ThreadLocal.withInitial(() -> new Inflater(true));

  /** The JSON itself, or its deflated form when {@link #deflated}. */
  private final byte[] stored;
  private final int length;

  private StoredJson(byte[] stored, int length) {
    this.stored = stored;
    this.length = length;
  }

  /** Keeps {@code json} (which the caller no longer changes), deflated when that saves a quarter of it. */
  static StoredJson of(byte[] json) {
    if (json.length < DEFLATE_FROM) {
      return new StoredJson(json, json.length);
    }
    Deflater deflater = DEFLATER.get();
    deflater.reset();
    deflater.setDictionary(DICTIONARY);
    deflater.setInput(json);
    deflater.finish();
    byte[] out = new byte[json.length * 3 / 4];
    int size = deflater.deflate(out);
    if (!deflater.finished()) {
      return new StoredJson(json, json.length); // it did not fit in three quarters
    }
    return new StoredJson(Arrays.copyOf(out, size), json.length);
  }

  /** Whether the JSON is kept deflated. */
  boolean deflated() {
    return stored.length != length;
  }

  /** Length of the JSON in bytes. */
  int length() {
    return length;
  }

  /** Bytes kept for it. */
  int storedSize() {
    return stored.length;
  }

  /** The JSON; when it is not deflated, the kept array itself, which callers only read. */
  byte[] bytes() {
    if (!deflated()) {
      return stored;
    }
    byte[] json = new byte[length];
    inflateInto(json, 0);
    return json;
  }

  /** Writes the JSON into {@code buffer} from {@code offset}, which has {@link #length} bytes of room. */
  void copyInto(byte[] buffer, int offset) {
    if (deflated()) {
      inflateInto(buffer, offset);
    } else {
      System.arraycopy(stored, 0, buffer, offset, length);
    }
  }

  private void inflateInto(byte[] buffer, int offset) {
    Inflater inflater = INFLATER.get();
    inflater.reset();
    inflater.setDictionary(DICTIONARY);
    inflater.setInput(stored);
    try {
      int at = offset;
      while (at < offset + length) {
        int read = inflater.inflate(buffer, at, offset + length - at);
        if (read == 0 && (inflater.finished() || inflater.needsInput() || inflater.needsDictionary())) {
          break;
        }
        at += read;
      }
      if (at != offset + length) {
        throw new IllegalStateException("stored JSON inflated to " + (at - offset) + " of its " + length + " bytes");
      }
    } catch (DataFormatException e) {
      throw new IllegalStateException("stored JSON does not inflate", e);
    }
  }
}
