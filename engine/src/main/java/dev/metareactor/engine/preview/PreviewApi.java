package dev.metareactor.engine.preview;

import dev.metareactor.engine.controller.rolling.RollingUpdate;
import dev.metareactor.engine.host.OneShot;
import dev.metareactor.engine.kube.ApiException;
import dev.metareactor.engine.kube.ApiResource;
import dev.metareactor.engine.kube.ApiWriter;
import dev.metareactor.engine.kube.ForwardingObjectApi;
import dev.metareactor.engine.kube.KubeJson;
import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.engine.kube.ObjectApi;
import dev.metareactor.engine.preview.PlannedWrite.Verb;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.util.context.Context;
import reactor.util.context.ContextView;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * The {@link ObjectApi} of a preview: reads go to the API server as the engine's do; every write is sent as a
 * server-side dry run ({@code dryRun=All}: validated, defaulted and admitted, then dropped) and recorded as a
 * {@link PlannedWrite} with the object before it (an uncached read; none for a create) and as the API server would
 * store it. Events
 * are recorded, never sent. The sync a write belongs to is the {@link OneShot.Unit} its subscriber put in the Reactor
 * context ({@link #about}).
 *
 * <p>The dry run's answer is what the sync goes on with, so the rest of the sync (a status computed from what was
 * written, a child's create refused with 409) runs as it would for real.
 */
public final class PreviewApi extends ForwardingObjectApi {

  private static final Object ABOUT = new Object();

  private final ObjectApi dryRuns;
  private final AtomicLong sequence = new AtomicLong();
  private final Queue<PlannedWrite> writes = new ConcurrentLinkedQueue<>();
  private final Queue<RecordedEvent> events = new ConcurrentLinkedQueue<>();

  /** An Event the engine would record. */
  public record RecordedEvent(String namespace, String name, String type, String reason, String message) {}

  /**
   * @param reads what reads go to (the engine's writer, used only to read)
   * @param dryRuns what writes go to: a writer whose every write is a dry run
   */
  public PreviewApi(ObjectApi reads, ObjectApi dryRuns) {
    super(reads);
    this.dryRuns = Objects.requireNonNull(dryRuns, "dryRuns");
  }

  /** The context under which a sync's writes are recorded as {@code key}'s. */
  public static Context about(OneShot.Unit key) {
    return Context.of(ABOUT, key);
  }

  /** The writes recorded so far, in the order they were sent. */
  public List<PlannedWrite> writes() {
    return writes.stream().sorted(Comparator.comparingLong(PlannedWrite::sequence)).toList();
  }

  /** The Events recorded so far. */
  public List<RecordedEvent> events() {
    return List.copyOf(events);
  }




  @Override
  public Mono<Written> apply(ApiResource resource, ObjectNode configuration, String fieldManager, boolean dryRun) {
    if (dryRun) {
      return dryRuns.apply(resource, configuration, fieldManager, true); // the engine's own dry run: not a write
    }
    return written(resource, namespaceOf(configuration), nameOf(configuration), Verb.UPDATE,
        dryRuns.apply(resource, configuration, fieldManager, true));
  }

  @Override
  public Mono<Written> applyCreate(ApiResource resource, ObjectNode configuration, String fieldManager) {
    return written(resource, namespaceOf(configuration), nameOf(configuration), Verb.CREATE,
        dryRuns.applyCreate(resource, configuration, fieldManager));
  }

  @Override
  public Mono<Written> create(ApiResource resource, ObjectNode object) {
    if (ApiWriter.isEvent(resource)) {
      JsonNode involved = object.path("involvedObject");
      events.add(new RecordedEvent(involved.path("namespace").asString(""), involved.path("name").asString(""),
          object.path("type").asString(""), object.path("reason").asString(""),
          object.path("message").asString("")));
      return Mono.just(new Written(KubeJson.bytes(object)));
    }
    return written(resource, namespaceOf(object), nameOf(object), Verb.CREATE, dryRuns.create(resource, object));
  }

  @Override
  public Mono<Written> update(ApiResource resource, ObjectNode object) {
    return written(resource, namespaceOf(object), nameOf(object), Verb.UPDATE, dryRuns.update(resource, object));
  }

  @Override
  public Mono<Written> patch(ApiResource resource, String namespace, String name, PatchType type, JsonNode body) {
    if (ApiWriter.isEvent(resource)) {
      return Mono.just(new Written(KubeJson.bytes(body))); // a count bumped on an Event this preview never sent
    }
    return written(resource, namespace, name, Verb.UPDATE, dryRuns.patch(resource, namespace, name, type, body));
  }

  @Override
  public Mono<Written> patchStatus(ApiResource resource, String namespace, String name, PatchType type,
      JsonNode body) {
    return written(resource, namespace, name, Verb.STATUS, dryRuns.patchStatus(resource, namespace, name, type,
        body));
  }

  @Override
  public Mono<Written> applyStatus(ApiResource resource, ObjectNode configuration, String fieldManager) {
    return written(resource, namespaceOf(configuration), nameOf(configuration), Verb.STATUS,
        dryRuns.applyStatus(resource, configuration, fieldManager));
  }

  @Override
  public Mono<Void> delete(ApiResource resource, String namespace, String name, @Nullable String uid) {
    return deleted(resource, namespace, name, dryRuns.delete(resource, namespace, name, uid));
  }

  @Override
  public Mono<Void> deleteAt(ApiResource resource, String namespace, String name, String resourceVersion) {
    return deleted(resource, namespace, name, dryRuns.deleteAt(resource, namespace, name, resourceVersion));
  }

  /** Reads the object as it is, then sends the dry run and records the write. */
  private Mono<Written> written(ApiResource resource, String namespace, String name, Verb intended,
      Mono<Written> dryRun) {
    return Mono.deferContextual(context -> {
      long order = sequence.incrementAndGet();
      OneShot.Unit about = about(context);
      // A create needs no read: there is no object before it (if there is one, the dry run is refused with 409).
      Mono<Optional<ObjectNode>> now = intended == Verb.CREATE ? Mono.just(Optional.empty())
          : current(resource, namespace, name);
      return now.flatMap(before -> dryRun
          .doOnNext(answer -> writes.add(planned(about, order, intended, resource, namespace, name,
              before.orElse(null), (ObjectNode) KubeJson.readObjectTree(answer.answer()))))
          .doOnError(ApiException.class, refused -> writes.add(new PlannedWrite(about, order,
              before.isEmpty() && intended != Verb.STATUS ? Verb.CREATE : intended, resource, namespace, name,
              before.orElse(null), null, null, refusal(refused)))));
    });
  }

  private Mono<Void> deleted(ApiResource resource, String namespace, String name, Mono<Void> dryRun) {
    return Mono.deferContextual(context -> {
      long order = sequence.incrementAndGet();
      OneShot.Unit about = about(context);
      return current(resource, namespace, name).flatMap(before -> dryRun
          .doOnSuccess(done -> before.ifPresent(object -> writes.add(new PlannedWrite(about, order,
              isRevision(resource) ? Verb.REVISION : Verb.DELETE, resource, namespace, name, object, null, null,
              null))))
          .doOnError(ApiException.class, refused -> writes.add(new PlannedWrite(about, order, Verb.DELETE, resource,
              namespace, name, before.orElse(null), null, null, refusal(refused)))));
    });
  }

  /** The object as it is now, or empty when there is none. */
  private Mono<Optional<ObjectNode>> current(ApiResource resource, String namespace, String name) {
    return getTree(resource, namespace, name)
        .map(Optional::of)
        .onErrorResume(e -> ApiException.codeOf(e) == 404, e -> Mono.just(Optional.empty()));
  }

  /**
   * The write as the preview names it: a create when there was no object; a revision's write as a revision; a
   * change of nothing but the ControllerRef as an adoption or a release.
   */
  static PlannedWrite planned(OneShot.@Nullable Unit about, long order, Verb intended, ApiResource resource,
      String namespace, String name, @Nullable ObjectNode before, ObjectNode after) {
    boolean created = before == null;
    ObjectNode shownAfter = Objects.requireNonNull(MergeDiff.comparable(after, created));
    if (created) {
      return new PlannedWrite(about, order, isRevision(resource) ? Verb.REVISION : Verb.CREATE, resource, namespace,
          name, null, after, shownAfter, null);
    }
    ObjectNode was = Objects.requireNonNull(MergeDiff.comparable(before, false));
    ObjectNode is = shownAfter.deepCopy();
    if (intended != Verb.STATUS) {
      // A write of the object leaves its status as it is: what moved there between the read and the dry run (a
      // Deployment's replicas becoming ready) is not the write's.
      was.remove("status");
      is.remove("status");
    }
    ObjectNode diff = MergeDiff.of(was, is);
    Verb verb = intended;
    if (isRevision(resource)) {
      verb = Verb.REVISION;
    } else if (intended == Verb.UPDATE && MergeDiff.onlyOwnerReferences(diff)) {
      boolean controlled = KubeObject.of(after).controller() != null;
      boolean wasControlled = KubeObject.of(before).controller() != null;
      verb = controlled && !wasControlled ? Verb.ADOPT : !controlled && wasControlled ? Verb.RELEASE : Verb.UPDATE;
    }
    return new PlannedWrite(about, order, verb, resource, namespace, name, before, after, diff, null);
  }

  private static OneShot.@Nullable Unit about(ContextView context) {
    return context.<OneShot.Unit>getOrEmpty(ABOUT).orElse(null);
  }

  private static String refusal(ApiException refused) {
    return refused.code() + " " + refused.getMessage();
  }

  private static boolean isRevision(ApiResource resource) {
    return resource.resource().equals(RollingUpdate.REVISIONS_RESOURCE)
        && RollingUpdate.REVISIONS_API_VERSION.startsWith(resource.group() + "/");
  }

  private static String namespaceOf(JsonNode object) {
    return object.path("metadata").path("namespace").asString("");
  }

  private static String nameOf(JsonNode object) {
    return object.path("metadata").path("name").asString("");
  }
}
