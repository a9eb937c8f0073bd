package dev.metareactor.engine.controller;

import dev.metareactor.engine.discovery.ApiResource;
import dev.metareactor.engine.informer.InformerIndexes;
import dev.metareactor.engine.informer.InformerLease;
import dev.metareactor.engine.kube.ApiWriter;
import dev.metareactor.engine.selector.LabelSelector;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
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
 *   <li>objects controlled by anyone else are never touched.</li>
 * </ul>
 *
 * <p>Candidates come from the informer indexes: the objects controlled by the parent's UID, and the objects that
 * carry one label the selector requires (or, for a selector without such a label, the orphans of the parent's
 * namespace), of which only orphans are considered. Writes are JSON merge patches carrying the object's resourceVersion, so a concurrent change makes
 * the claim fail with a conflict and the parent is synced again, never a lost update.
 */
public final class ChildClaimer {

  private static final Logger LOG = LoggerFactory.getLogger(ChildClaimer.class);

  private final ApiWriter api;
  private final KubernetesSerialization json;

  public ChildClaimer(ApiWriter api, KubernetesSerialization json) {
    this.api = Objects.requireNonNull(api, "api");
    this.json = Objects.requireNonNull(json, "json");
  }

  /**
   * Claims the parent's children of each type.
   *
   * @param parentResource the parent's resource, for its ControllerRef's apiVersion and the uncached read
   * @return the claimed children by type (adopted ones as written), in the order of {@code types}; fails when a
   *     write failed or adoption was refused
   */
  public Mono<Map<ChildType, List<GenericKubernetesResource>>> claim(GenericKubernetesResource parent,
      ApiResource parentResource, LabelSelector selector, List<ChildType> types) {
    boolean deleting = parent.getMetadata().getDeletionTimestamp() != null;
    String uid = parent.getMetadata().getUid();
    Mono<Void> parentStillThere = verifyParent(parent, parentResource).cache();
    Map<ChildType, List<GenericKubernetesResource>> claimed = new LinkedHashMap<>();
    List<Mono<Void>> writes = new ArrayList<>();
    for (ChildType type : types) {
      // Adoptions of one type complete concurrently and add to this list.
      List<GenericKubernetesResource> mine = Collections.synchronizedList(new ArrayList<>());
      claimed.put(type, mine);
      if (parentResource.namespaced() && !type.resource().namespaced()) {
        continue; // a namespaced parent can never own a cluster-scoped object
      }
      for (GenericKubernetesResource child : type.informer().controlledBy(uid)) {
        if (!inScope(parent, parentResource, child)) {
          continue;
        }
        if (selector.matches(child.getMetadata().getLabels())) {
          mine.add(child);
        } else if (!deleting) {
          writes.add(release(type, parent, child));
        }
      }
      if (deleting) {
        continue;
      }
      for (GenericKubernetesResource orphan : orphanCandidates(type.informer(), parent, parentResource, selector)) {
        if (orphan.getMetadata().getDeletionTimestamp() == null
            && selector.matches(orphan.getMetadata().getLabels())) {
          writes.add(parentStillThere.then(adopt(type, parent, parentResource, orphan)).doOnNext(mine::add).then());
        }
      }
    }
    return WriteBatch.run("can't claim children", writes).then(Mono.fromSupplier(() -> {
      // Adoptions finish in any order; keep the children in a stable order for the hook.
      claimed.values().forEach(list -> list.sort(Comparator.comparing(c -> c.getMetadata().getName())));
      return claimed;
    }));
  }

  /** Orphans that may match: a label bucket when the selector requires a label, else the parent's namespace. */
  private static List<GenericKubernetesResource> orphanCandidates(InformerLease informer,
      GenericKubernetesResource parent, ApiResource parentResource, LabelSelector selector) {
    String namespace = parentResource.namespaced() ? parent.getMetadata().getNamespace() : "";
    List<GenericKubernetesResource> candidates = selector.requiredLabels().isEmpty() && !namespace.isEmpty()
        ? informer.orphans(namespace) : informer.candidates(selector, namespace);
    return candidates.stream()
        .filter(child -> InformerIndexes.controllerOf(child) == null && inScope(parent, parentResource, child))
        .toList();
  }

  /** A namespaced parent only owns objects in its own namespace; a cluster-scoped one owns objects anywhere. */
  private static boolean inScope(GenericKubernetesResource parent, ApiResource parentResource,
      GenericKubernetesResource child) {
    return !parentResource.namespaced()
        || Objects.equals(parent.getMetadata().getNamespace(), child.getMetadata().getNamespace());
  }

  /** The one uncached read: the parent must still exist with this UID and must not be being deleted. */
  private Mono<Void> verifyParent(GenericKubernetesResource parent, ApiResource parentResource) {
    String name = describe(parent);
    return api.get(parentResource, parent.getMetadata().getNamespace(), parent.getMetadata().getName())
        .onErrorMap(e -> e instanceof KubernetesClientException k && k.getCode() == 404,
            e -> new IllegalStateException("can't adopt for " + name + ": it has been deleted"))
        .switchIfEmpty(Mono.error(() -> new IllegalStateException("can't adopt for " + name + ": it has been deleted")))
        .flatMap(live -> {
          if (!Objects.equals(live.getMetadata().getUid(), parent.getMetadata().getUid())) {
            return Mono.error(new IllegalStateException("can't adopt for " + name + ": original object is gone: got "
                + "uid " + live.getMetadata().getUid() + ", wanted " + parent.getMetadata().getUid()));
          }
          if (live.getMetadata().getDeletionTimestamp() != null) {
            return Mono.error(new IllegalStateException("can't adopt for " + name + ": it has just been deleted at "
                + live.getMetadata().getDeletionTimestamp()));
          }
          return Mono.empty();
        });
  }

  private Mono<GenericKubernetesResource> adopt(ChildType type, GenericKubernetesResource parent,
      ApiResource parentResource, GenericKubernetesResource orphan) {
    List<Map<String, Object>> refs = refsOf(orphan);
    Map<String, Object> ours = new LinkedHashMap<>();
    ours.put("apiVersion", parentResource.apiVersion());
    ours.put("kind", parentResource.kind());
    ours.put("name", parent.getMetadata().getName());
    ours.put("uid", parent.getMetadata().getUid());
    ours.put("controller", true);
    ours.put("blockOwnerDeletion", true);
    refs.add(ours);
    return patchRefs(type, orphan, refs, "adopt")
        .doOnNext(adopted -> LOG.info("{} adopted {} {}", describe(parent), type.resource().kind(), describe(orphan)));
  }

  private Mono<Void> release(ChildType type, GenericKubernetesResource parent, GenericKubernetesResource child) {
    List<Map<String, Object>> refs = refsOf(child);
    refs.removeIf(ref -> Objects.equals(ref.get("uid"), parent.getMetadata().getUid()));
    return patchRefs(type, child, refs, "release")
        .doOnNext(released -> LOG.info("{} released {} {}", describe(parent), type.resource().kind(), describe(child)))
        .then();
  }

  private Mono<GenericKubernetesResource> patchRefs(ChildType type, GenericKubernetesResource child,
      List<Map<String, Object>> refs, String verb) {
    Map<String, Object> metadata = new LinkedHashMap<>();
    metadata.put("ownerReferences", refs);
    metadata.put("resourceVersion", child.getMetadata().getResourceVersion());
    String patch = json.asJson(Map.of("metadata", metadata));
    return api.mergePatch(type.resource(), child.getMetadata().getNamespace(), child.getMetadata().getName(), patch)
        .onErrorResume(e -> e instanceof KubernetesClientException k && k.getCode() == 404, e -> Mono.empty())
        .onErrorMap(e -> !(e instanceof KubernetesClientException k && k.getCode() == 409),
            e -> new IllegalStateException("can't " + verb + " " + type.resource().kind() + " " + describe(child)
                + ": " + e.getMessage(), e));
  }

  private List<Map<String, Object>> refsOf(GenericKubernetesResource child) {
    List<Map<String, Object>> refs = new ArrayList<>();
    List<OwnerReference> existing = child.getMetadata().getOwnerReferences();
    if (existing != null) {
      for (OwnerReference ref : existing) {
        @SuppressWarnings("unchecked")
        Map<String, Object> asMap = json.convertValue(ref, Map.class);
        refs.add(asMap);
      }
    }
    return refs;
  }

  private static String describe(GenericKubernetesResource object) {
    String namespace = object.getMetadata().getNamespace();
    return (namespace == null || namespace.isEmpty() ? "" : namespace + "/") + object.getMetadata().getName();
  }
}
