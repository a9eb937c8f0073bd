package dev.metareactor.engine.controller;

import dev.metareactor.engine.informer.InformerLease;
import dev.metareactor.engine.kube.ApiException;
import dev.metareactor.engine.kube.ApiResource;
import dev.metareactor.engine.kube.KubeJson;
import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.engine.kube.ObjectApi;
import dev.metareactor.engine.kube.OwnerRef;
import dev.metareactor.engine.selector.LabelSelector;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * Decides which objects a parent owns, by the ControllerRef rules ("the three laws": take ownership of what you
 * select, don't interfere with what others own, don't share), before each sync:
 *
 * <ul>
 *   <li>an object the parent controls and its selector still matches is claimed;</li>
 *   <li>an object the parent controls that no longer matches is released (its ControllerRef removed), unless the
 *       parent is being deleted;</li>
 *   <li>an orphan that matches is adopted (a ControllerRef added), unless the parent or the orphan is being
 *       deleted; before the first adoption of a sync the parent is read once from the API server, not the cache,
 *       to make sure it still exists and is not being deleted (adopting for a parent that is gone would hand the
 *       orphan to the garbage collector);</li>
 *   <li>objects controlled by anyone else are never touched, nor are those marked as the children of a parent in
 *       another namespace ({@link OtherNamespaceChildren}), which have no ControllerRef;</li>
 *   <li>with children in other namespaces allowed ({@code metareactor.dev/cross-namespace-children}), the parent's
 *       children there, found by their label, are claimed while its selector matches them and released (their
 *       marks removed) otherwise; nothing there is ever adopted.</li>
 * </ul>
 *
 * <p>Candidates come from the informer indexes: the objects controlled by the parent's UID, and the objects that
 * carry one label the selector requires (or, for a selector without such a label, the orphans of the parent's
 * namespace), of which only orphans are considered. Writes are JSON merge patches carrying the object's
 * resourceVersion, so a concurrent change makes
 * the claim fail with a conflict and the parent is synced again, never a lost update.
 */
public final class ChildClaimer {

  private static final Logger LOG = LoggerFactory.getLogger(ChildClaimer.class);

  private final ObjectApi api;

  public ChildClaimer(ObjectApi api) {
    this.api = Objects.requireNonNull(api, "api");
  }

  /**
   * Claims the parent's children of each type.
   *
   * @param parentResource the parent's resource, for its ControllerRef's apiVersion and the uncached read
   * @return the claimed children by type (adopted ones as written), in the order of {@code types}; fails when a
   *     write failed or adoption was refused
   */
  public Mono<Map<ChildType, List<KubeObject>>> claim(KubeObject parent, ApiResource parentResource,
      LabelSelector selector, List<ChildType> types) {
    return claim(parent, parentResource, selector, types, false);
  }

  /**
   * The same, and with {@code otherNamespaces} the children of a namespaced parent in other namespaces too
   * ({@link OtherNamespaceChildren}): those its label marks as the parent's, from the label index, claimed while the
   * selector matches them and otherwise released (the marks removed) unless the parent is being deleted. Nothing in
   * another namespace is ever adopted: the engine only creates children there.
   */
  public Mono<Map<ChildType, List<KubeObject>>> claim(KubeObject parent, ApiResource parentResource,
      LabelSelector selector, List<ChildType> types, boolean otherNamespaces) {
    boolean deleting = parent.deleting();
    String uid = parent.storedUid();
    Mono<Void> parentStillThere = verifyParent(parent, parentResource).cache();
    Map<ChildType, List<KubeObject>> claimed = new LinkedHashMap<>();
    List<Mono<Void>> writes = new ArrayList<>();
    for (ChildType type : types) {
      // Adoptions of one type complete concurrently and add to this list.
      List<KubeObject> mine = Collections.synchronizedList(new ArrayList<>());
      claimed.put(type, mine);
      if (parentResource.namespaced() && !type.resource().namespaced()) {
        continue; // a namespaced parent can never own a cluster-scoped object
      }
      for (KubeObject child : type.informer().controlledBy(uid)) {
        if (!inScope(parent, parentResource, child)) {
          continue;
        }
        if (selector.matches(child.labels())) {
          mine.add(child);
        } else if (!deleting) {
          writes.add(release(type, parent, child));
        }
      }
      if (otherNamespaces && parentResource.namespaced()) {
        for (KubeObject child : OtherNamespaceChildren.trackedIn(type.informer(), parent)) {
          if (selector.matches(child.labels())) {
            mine.add(child);
          } else if (!deleting) {
            writes.add(untrack(type, parent, child));
          }
        }
      }
      if (deleting) {
        continue;
      }
      for (KubeObject orphan : orphanCandidates(type.informer(), parent, parentResource, selector)) {
        if (!orphan.deleting() && selector.matches(orphan.labels())) {
          writes.add(parentStillThere.then(adopt(type, parent, orphan)).doOnNext(mine::add).then());
        }
      }
    }
    return WriteBatch.run("can't claim children", writes).then(Mono.fromSupplier(() -> {
      // Adoptions finish in any order; keep the children in a stable order for the hook.
      claimed.values().forEach(list -> list.sort(Comparator.comparing(KubeObject::name)));
      return claimed;
    }));
  }

  /** Orphans that may match: a label bucket when the selector requires a label, else the parent's namespace. */
  private static List<KubeObject> orphanCandidates(InformerLease informer, KubeObject parent,
      ApiResource parentResource, LabelSelector selector) {
    String namespace = parentResource.namespaced() ? parent.namespace() : "";
    List<KubeObject> candidates = selector.requiredLabels().isEmpty() && !namespace.isEmpty()
        ? informer.orphans(namespace) : informer.candidates(selector, namespace);
    return candidates.stream()
        // An object marked as a child of a parent in another namespace is that parent's, though it has no
        // ControllerRef: never adopted.
        .filter(child -> child.controller() == null && inScope(parent, parentResource, child)
            && !child.labels().containsKey(OtherNamespaceChildren.PARENT_UID_LABEL))
        .toList();
  }

  /** A namespaced parent only owns objects in its own namespace; a cluster-scoped one owns objects anywhere. */
  private static boolean inScope(KubeObject parent, ApiResource parentResource, KubeObject child) {
    return !parentResource.namespaced() || parent.namespace().equals(child.namespace());
  }

  /** The one uncached read: the parent must still exist with this UID and must not be being deleted. */
  private Mono<Void> verifyParent(KubeObject parent, ApiResource parentResource) {
    String name = parent.namespacedName();
    return api.get(parentResource, parent.namespace(), parent.name())
        .onErrorMap(e -> ApiException.codeOf(e) == 404,
            e -> new IllegalStateException("can't adopt for " + name + ": it has been deleted"))
        .switchIfEmpty(Mono.error(() -> new IllegalStateException("can't adopt for " + name + ": it has been deleted")))
        .flatMap(live -> {
          if (!Objects.equals(live.uid(), parent.uid())) {
            return Mono.error(new IllegalStateException("can't adopt for " + name + ": original object is gone: got "
                + "uid " + live.uid() + ", wanted " + parent.uid()));
          }
          if (live.deleting()) {
            return Mono.error(new IllegalStateException("can't adopt for " + name + ": it has just been deleted at "
                + live.deletionTimestamp()));
          }
          return Mono.empty();
        });
  }

  private Mono<KubeObject> adopt(ChildType type, KubeObject parent, KubeObject orphan) {
    ArrayNode refs = refsOf(orphan);
    OwnerRef.controllerOf(parent).appendTo(refs);
    return patchRefs(type, orphan, refs, "adopt")
        .doOnNext(adopted -> LOG.info("{} adopted {} {}", parent.namespacedName(), type.resource().kind(),
            orphan.namespacedName()));
  }

  private Mono<Void> release(ChildType type, KubeObject parent, KubeObject child) {
    ArrayNode refs = KubeJson.nodes().arrayNode();
    for (JsonNode ref : refsOf(child)) {
      if (!parent.storedUid().equals(ref.path("uid").asString(""))) {
        refs.add(ref);
      }
    }
    return patchRefs(type, child, refs, "release")
        .doOnNext(released -> LOG.info("{} released {} {}", parent.namespacedName(), type.resource().kind(),
            child.namespacedName()))
        .then();
  }

  /** Releases a child in another namespace: its marks removed, as a release removes a ControllerRef. */
  private Mono<Void> untrack(ChildType type, KubeObject parent, KubeObject child) {
    ObjectNode patch = KubeJson.nodes().objectNode();
    ObjectNode metadata = patch.putObject("metadata");
    metadata.putObject("labels").putNull(OtherNamespaceChildren.PARENT_UID_LABEL);
    metadata.putObject("annotations").putNull(OtherNamespaceChildren.PARENT_ANNOTATION)
        .putNull(OtherNamespaceChildren.CONTROLLER_ANNOTATION);
    return write(type, child, patch, "release")
        .doOnNext(released -> LOG.info("{} released {} {} (in another namespace)", parent.namespacedName(),
            type.resource().kind(), child.namespacedName()))
        .then();
  }

  private Mono<KubeObject> patchRefs(ChildType type, KubeObject child, ArrayNode refs, String verb) {
    ObjectNode patch = KubeJson.nodes().objectNode();
    ObjectNode metadata = patch.putObject("metadata");
    metadata.set("ownerReferences", refs);
    return write(type, child, patch, verb);
  }

  /** A merge patch carrying the child's resourceVersion, so that a concurrent change makes it a conflict. */
  private Mono<KubeObject> write(ChildType type, KubeObject child, ObjectNode patch, String verb) {
    ((ObjectNode) patch.get("metadata")).put("resourceVersion", child.resourceVersion());
    return api.mergePatch(type.resource(), child.namespace(), child.name(), patch)
        .map(ObjectApi.Written::object)
        .onErrorResume(e -> ApiException.codeOf(e) == 404, e -> Mono.empty())
        .onErrorMap(e -> ApiException.codeOf(e) != 409,
            e -> new IllegalStateException("can't " + verb + " " + type.resource().kind() + " " + child.namespacedName()
                + ": " + e.getMessage(), e));
  }

  /** The object's owner references exactly as written (a merge patch replaces the whole list). */
  private static ArrayNode refsOf(KubeObject child) {
    JsonNode refs = child.toTree().path("metadata").path("ownerReferences");
    return refs.isArray() ? (ArrayNode) refs : KubeJson.nodes().arrayNode();
  }

}
