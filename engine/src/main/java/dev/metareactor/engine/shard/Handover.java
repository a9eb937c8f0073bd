package dev.metareactor.engine.shard;

import dev.metareactor.engine.informer.InformerLease;
import dev.metareactor.engine.kube.ApiResource;
import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.engine.kube.ResourceVersions;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a replica's caches must show before it syncs a parent handed to it, so that its hook is never shown the
 * parent without the owned objects that moved with it.
 *
 * <p>Whoever moves a parent (its former owner, or the sharder taking a dead shard's) relabels the parent's owned
 * objects first and the parent last, and writes on the parent, beside its owner label, the annotation of the same
 * key ({@link #annotationValue}): for each owned resource, the highest resourceVersion those relabels got. The new
 * owner's owned-object informers receive each relabelled object as an event carrying that version, and its parent
 * informer may bring the parent before them (separate watches); until every owned informer has caught up to the
 * recorded version of its resource ({@link #lagging}), the parent is not synced and is tried again shortly (and at
 * once when the objects' own events arrive, which route to it).
 *
 * <p>Why those versions and not the parent's own: a watch's resourceVersion advances with the events of its own
 * resource (and the bookmarks that repeat it), so an informer of ConfigMaps never reaches the version of a later
 * write to a custom resource while no ConfigMap changes; the version of the last relabel of each resource is exactly
 * what that resource's watch delivers. ResourceVersions are compared as integers: the API calls them opaque, but
 * every Kubernetes API server makes them from etcd revisions, which grow with every write, and they are compared
 * only within one resource (one etcd, even where resources are split over several). A version that is not an integer
 * never holds a parent back; nor does any after {@link #WAIT_AT_MOST} (an annotation copied from another cluster by
 * a backup's restore may name versions this one never reaches), which is logged.
 */
public final class Handover {

  private static final Logger LOG = LoggerFactory.getLogger(Handover.class);
  /**
   * The longest a parent waits for the caches: far longer than a watch takes to deliver events written before the
   * parent's (milliseconds), shorter than the silence after which a watch is restarted; past it, the parent is
   * synced as without the annotation.
   */
  public static final Duration WAIT_AT_MOST = Duration.ofMinutes(1);
  /** How soon a parent whose owned objects are not all cached yet is tried again, if no event of theirs comes. */
  public static final Duration RECHECK = Duration.ofSeconds(1);

  private final String key;
  private final Map<String, InformerLease> owned = new LinkedHashMap<>();
  private final LongSupplier nanoTime;
  /** Parents held back, by UID: since when (nanoTime), for {@link #WAIT_AT_MOST}. */
  private final Map<String, Long> waitingSince = new ConcurrentHashMap<>();

  /**
   * @param ownerLabel the controller's owner label, also the key of the annotation
   * @param owned the informers of the controller's owned objects on this replica
   */
  public Handover(String ownerLabel, List<InformerLease> owned, LongSupplier nanoTime) {
    this.key = Objects.requireNonNull(ownerLabel, "ownerLabel");
    owned.forEach(lease -> this.owned.putIfAbsent(resourceKey(lease.resource()), lease));
    this.nanoTime = Objects.requireNonNull(nanoTime, "nanoTime");
  }

  /** How a resource is named in the annotation: {@code <resource>[.<group>]}, versions sharing one storage. */
  static String resourceKey(ApiResource resource) {
    return resource.group().isEmpty() ? resource.resource() : resource.resource() + "." + resource.group();
  }

  /**
   * The annotation's value: {@code <resource>[.<group>]=<resourceVersion>} for each resource, comma-separated, in
   * order of the names; empty when nothing moved with the parent (kept all the same: the annotation also tells
   * the new owner that the parent moved to it, {@link ShardParticipant#mark}).
   */
  static String annotationValue(Map<String, String> versions) {
    StringBuilder value = new StringBuilder();
    new TreeMap<>(versions).forEach((resource, version) ->
        value.append(value.length() == 0 ? "" : ",").append(resource).append('=').append(version));
    return value.toString();
  }

  /** The versions an annotation's value records (entries that cannot be read are left out). */
  static Map<String, String> versions(@Nullable String value) {
    Map<String, String> versions = new LinkedHashMap<>();
    if (value == null) {
      return versions;
    }
    for (String entry : value.split(",")) {
      int equals = entry.indexOf('=');
      if (equals > 0 && equals < entry.length() - 1) {
        versions.put(entry.substring(0, equals).trim(), entry.substring(equals + 1).trim());
      }
    }
    return versions;
  }

  /**
   * Notes that an object of {@code resource} moved with a parent at {@code version}, into {@code versions} (the
   * highest per resource).
   */
  static void record(Map<String, String> versions, ApiResource resource, @Nullable String version) {
    if (version != null && !version.isEmpty()) {
      versions.merge(resourceKey(resource), version, (a, b) -> ResourceVersions.newer(b, a) ? b : a);
    }
  }

  /**
   * What this replica's caches lack to sync {@code parent}: empty when every owned informer has caught up to the
   * version the parent's annotation records for its resource (or there is none, or the parent has waited
   * {@link #WAIT_AT_MOST}); else which informer is behind.
   */
  public Optional<String> lagging(KubeObject parent) {
    String value = parent.annotations().get(key);
    String uid = parent.storedUid();
    if (value == null) {
      return Optional.empty();
    }
    for (Map.Entry<String, String> moved : versions(value).entrySet()) {
      InformerLease informer = owned.get(moved.getKey());
      String seen = informer == null ? null : informer.resourceVersion();
      if (informer != null && (seen == null || ResourceVersions.newer(moved.getValue(), seen))) {
        long now = nanoTime.getAsLong();
        long since = waitingSince.computeIfAbsent(uid, u -> now);
        if (now - since < WAIT_AT_MOST.toNanos()) {
          return Optional.of("the cache of " + informer.resource() + " is at resourceVersion " + seen + ", the "
              + "objects that moved with " + parent.describe() + " at " + moved.getValue());
        }
        LOG.warn("{}: the cache of {} is still at resourceVersion {} after {}, short of {} that the annotation {} "
            + "records; syncing it anyway", parent.describe(), informer.resource(), seen, WAIT_AT_MOST,
            moved.getValue(), key);
        break;
      }
    }
    waitingSince.remove(uid);
    return Optional.empty();
  }

  /** A parent this replica may not sync yet: its owned objects are not all in the caches. */
  public static final class LaggingException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public LaggingException(String message) {
      super(message, null, false, false);
    }
  }
}
