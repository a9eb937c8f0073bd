package dev.metareactor.benchmarks;

import dev.metareactor.engine.kube.KubeJson;
import dev.metareactor.engine.kube.KubeObject;
import java.nio.charset.StandardCharsets;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import tools.jackson.core.JsonParser;
import tools.jackson.core.JsonToken;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * What the engine pays per object it receives from the API server and per object it hands to a hook, on two
 * workloads as the API server sends them in a watch event ({@code {"type":"MODIFIED","object":{...}}}, compact JSON,
 * with {@code managedFields}):
 *
 * <ul>
 *   <li>{@code configmap} — a child ConfigMap as the load harness's hook makes it (three data keys, a 256-byte
 *       payload, a ControllerRef, the last-applied annotation, two managed-fields entries): 1.8 KB;</li>
 *   <li>{@code pod} — a Pod with two containers, probes, resources, volumes, status and four managed-fields
 *       entries: 6.5 KB.</li>
 * </ul>
 *
 * <p>and two kinds of stream ({@code owners}): {@code one}, the same event again and again, and {@code distinct},
 * events whose ControllerRef (and so the owner's UID that {@code managedFields} names, {@code k:{"uid":"..."}}) differs
 * from event to event, as in a converge, where each child names its own parent (8,192 owners, taken in turn).
 *
 * <p>Benchmarks:
 * <ul>
 *   <li>{@code readEvent} — {@link KubeObject#read}: tokenize the event once, capture the metadata, splice
 *       {@code managedFields} out of the received bytes, keeping aside the field set of the engine's field manager
 *       when it has one, and deflate what is kept (what the informer does for every event);</li>
 *   <li>{@code readEventKeepingNothing} — the same without looking into {@code managedFields} (what it did before
 *       server-side apply needed the manager's field set);</li>
 *   <li>{@code readEventViaTree} — the way it was done before: parse the event into a tree, remove
 *       {@code managedFields}, write the tree back to bytes;</li>
 *   <li>{@code toTree} — {@link KubeObject#toTree}: a mutable tree of a cached object, inflated and parsed (what
 *       the apply engine reads for every desired child that exists);</li>
 *   <li>{@code embedRaw} / {@code embedTree} — write a hook request carrying the object as an observed child,
 *       from the cached bytes, inflated into the request ({@link KubeObject#raw}), or from a tree of it.</li>
 * </ul>
 *
 * <p>Command: {@code java -jar benchmarks/target/benchmarks.jar KubeObjectBenchmark -f 1 -wi 3 -i 5 -w 2s -r 2s
 * -prof gc}
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@State(Scope.Thread)
public class KubeObjectBenchmark {

  @Param({"configmap", "pod"})
  public String workload;

  @Param({"one", "distinct"})
  public String owners;

  /** The owner's UID in both workloads' managed fields (and the ConfigMap's ControllerRef and labels). */
  private static final String OWNER_UID = "5f1e8a5c-0b5e-4d51-9d3e-7a1c0e2b9f10";

  private byte[][] events;
  private int next;
  private KubeObject object;

  @Setup
  public void setUp() {
    String object = workload.equals("pod") ? POD : CONFIG_MAP;
    events = new byte[owners.equals("one") ? 1 : 8192][];
    for (int i = 0; i < events.length; i++) {
      String owned = i == 0 ? object : object.replace(OWNER_UID, new UUID(0x5eed, i).toString());
      events[i] = ("{\"type\":\"MODIFIED\",\"object\":" + owned + "}").getBytes(StandardCharsets.UTF_8);
    }
    this.object = KubeObject.parse(object.getBytes(StandardCharsets.UTF_8));
  }

  private byte[] nextEvent() {
    byte[] event = events[next];
    next = (next + 1) % events.length;
    return event;
  }

  @Benchmark
  public KubeObject readEvent() {
    return read("metacontroller");
  }

  @Benchmark
  public KubeObject readEventKeepingNothing() {
    return read(null);
  }

  private KubeObject read(String fieldManager) {
    byte[] event = nextEvent();
    try (JsonParser parser = KubeJson.objectParser(event)) {
      parser.nextToken();
      while (parser.nextToken() == JsonToken.PROPERTY_NAME) {
        String field = parser.currentName();
        parser.nextToken();
        if (field.equals("object")) {
          return KubeObject.read(parser, event, "v1", "ConfigMap", fieldManager);
        }
        parser.skipChildren();
      }
      throw new IllegalStateException("no object");
    }
  }

  @Benchmark
  public byte[] readEventViaTree() {
    JsonNode tree = KubeJson.mapper().readTree(nextEvent());
    ObjectNode object = (ObjectNode) tree.get("object");
    ((ObjectNode) object.get("metadata")).remove("managedFields");
    return KubeJson.bytes(object);
  }

  @Benchmark
  public ObjectNode toTree() {
    return object.toTree();
  }

  @Benchmark
  public byte[] embedRaw() {
    ObjectNode request = KubeJson.nodes().objectNode();
    request.putObject("children").putObject("ConfigMap.v1").putRawValue(object.name(), object.raw());
    return KubeJson.bytes(request);
  }

  @Benchmark
  public byte[] embedTree() {
    ObjectNode request = KubeJson.nodes().objectNode();
    request.putObject("children").putObject("ConfigMap.v1").set(object.name(), object.toTree());
    return KubeJson.bytes(request);
  }

  /** Two managed-fields entries, as the API server tracks a controller's and kubectl's writes. */
  static final String MANAGED_FIELD_ENTRIES = "{\"manager\":\"metareactor\",\"operation\":\"Update\","
      + "\"apiVersion\":\"v1\",\"time\":\"2026-11-23T12:00:00Z\",\"fieldsType\":\"FieldsV1\",\"fieldsV1\":"
      + "{\"f:data\":{\".\":{},\"f:index\":{},\"f:payload\":{},\"f:value\":{}},\"f:metadata\":{\"f:annotations\":"
      + "{\".\":{},\"f:metacontroller.k8s.io/last-applied-configuration\":{}},\"f:labels\":{\".\":{},"
      + "\"f:bench.metareactor.dev/load\":{},\"f:controller-uid\":{}},\"f:ownerReferences\":{\".\":{},"
      + "\"k:{\\\"uid\\\":\\\"5f1e8a5c-0b5e-4d51-9d3e-7a1c0e2b9f10\\\"}\":{}}}}},{\"manager\":\"kubectl\","
      + "\"operation\":\"Update\",\"apiVersion\":\"v1\",\"time\":\"2026-11-23T12:01:00Z\",\"fieldsType\":\"FieldsV1\","
      + "\"fieldsV1\":{\"f:metadata\":{\"f:labels\":{\"f:team\":{}}}}}";

  static final String MANAGED_FIELDS = "\"managedFields\":[" + MANAGED_FIELD_ENTRIES + "]";

  static final String CONFIG_MAP = "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"p-00001-0\","
      + "\"namespace\":\"load-bench\",\"uid\":\"0c3f1d6e-9a41-4f0e-8f7b-2c9d1e5a7b33\",\"resourceVersion\":\"184467\","
      + "\"creationTimestamp\":\"2026-11-23T12:00:00Z\",\"labels\":{\"bench.metareactor.dev/load\":\"true\","
      + "\"controller-uid\":\"5f1e8a5c-0b5e-4d51-9d3e-7a1c0e2b9f10\",\"team\":\"a\"},\"annotations\":{"
      + "\"metacontroller.k8s.io/last-applied-configuration\":\"{\\\"apiVersion\\\":\\\"v1\\\",\\\"data\\\":{"
      + "\\\"index\\\":\\\"0\\\",\\\"payload\\\":\\\"" + "abcdefghijklmnopqrstuvwxyz".repeat(10).substring(0, 256)
      + "\\\",\\\"value\\\":\\\"v1\\\"},\\\"kind\\\":\\\"ConfigMap\\\",\\\"metadata\\\":{\\\"labels\\\":{"
      + "\\\"bench.metareactor.dev/load\\\":\\\"true\\\",\\\"controller-uid\\\":"
      + "\\\"5f1e8a5c-0b5e-4d51-9d3e-7a1c0e2b9f10\\\"},\\\"name\\\":\\\"p-00001-0\\\",\\\"namespace\\\":"
      + "\\\"load-bench\\\"}}\"},\"ownerReferences\":[{\"apiVersion\":\"bench.metareactor.dev/v1\",\"kind\":"
      + "\"LoadParent\",\"name\":\"p-00001\",\"uid\":\"5f1e8a5c-0b5e-4d51-9d3e-7a1c0e2b9f10\",\"controller\":true,"
      + "\"blockOwnerDeletion\":true}]," + MANAGED_FIELDS + "},\"data\":{\"index\":\"0\",\"payload\":\""
      + "abcdefghijklmnopqrstuvwxyz".repeat(10).substring(0, 256) + "\",\"value\":\"v1\"}}";

  static final String CONTAINER = "{\"name\":\"NAME\",\"image\":\"registry.example/app:1.2.3\",\"ports\":["
      + "{\"name\":\"http\",\"containerPort\":8080,\"protocol\":\"TCP\"},{\"name\":\"metrics\",\"containerPort\":9090,"
      + "\"protocol\":\"TCP\"}],\"env\":[{\"name\":\"MODE\",\"value\":\"production\"},{\"name\":\"POD_NAME\","
      + "\"valueFrom\":{\"fieldRef\":{\"apiVersion\":\"v1\",\"fieldPath\":\"metadata.name\"}}}],\"resources\":"
      + "{\"limits\":{\"cpu\":\"1\",\"memory\":\"512Mi\"},\"requests\":{\"cpu\":\"100m\",\"memory\":\"128Mi\"}},"
      + "\"volumeMounts\":[{\"name\":\"config\",\"mountPath\":\"/etc/app\"},{\"name\":\"kube-api-access\","
      + "\"readOnly\":true,\"mountPath\":\"/var/run/secrets/kubernetes.io/serviceaccount\"}],\"livenessProbe\":"
      + "{\"httpGet\":{\"path\":\"/healthz\",\"port\":8080,\"scheme\":\"HTTP\"},\"initialDelaySeconds\":5,"
      + "\"timeoutSeconds\":1,\"periodSeconds\":10,\"successThreshold\":1,\"failureThreshold\":3},"
      + "\"terminationMessagePath\":\"/dev/termination-log\",\"terminationMessagePolicy\":\"File\","
      + "\"imagePullPolicy\":\"IfNotPresent\"}";

  static final String POD = "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"web-7d4b9c6f5d-x2x9k\","
      + "\"generateName\":\"web-7d4b9c6f5d-\",\"namespace\":\"prod\",\"uid\":\"8a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9\","
      + "\"resourceVersion\":\"9918273\",\"creationTimestamp\":\"2026-11-23T12:00:00Z\",\"labels\":{\"app\":\"web\","
      + "\"pod-template-hash\":\"7d4b9c6f5d\"},\"ownerReferences\":["
      + "{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\","
      + "\"name\":\"web-7d4b9c6f5d\",\"uid\":\"1f2e3d4c-5b6a-7980-a1b2-c3d4e5f60718\",\"controller\":true,"
      + "\"blockOwnerDeletion\":true}],\"managedFields\":[" + MANAGED_FIELD_ENTRIES + "," + MANAGED_FIELD_ENTRIES
      + "]},\"spec\":{\"containers\":[" + CONTAINER.replace("NAME", "app") + "," + CONTAINER.replace("NAME", "sidecar")
      + "],\"volumes\":[{\"name\":\"config\",\"configMap\":{\"name\":\"web\",\"defaultMode\":420}}],\"restartPolicy\":"
      + "\"Always\",\"terminationGracePeriodSeconds\":30,\"dnsPolicy\":\"ClusterFirst\",\"serviceAccountName\":"
      + "\"default\",\"nodeName\":\"node-1\",\"schedulerName\":\"default-scheduler\",\"tolerations\":[{\"key\":"
      + "\"node.kubernetes.io/not-ready\",\"operator\":\"Exists\",\"effect\":\"NoExecute\",\"tolerationSeconds\":300}],"
      + "\"priority\":0},\"status\":{\"phase\":\"Running\",\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\","
      + "\"lastTransitionTime\":\"2026-11-23T12:00:10Z\"}],\"hostIP\":\"10.0.0.5\",\"podIP\":\"10.1.2.3\","
      + "\"startTime\":\"2026-11-23T12:00:00Z\",\"qosClass\":\"Burstable\"}}";
}
