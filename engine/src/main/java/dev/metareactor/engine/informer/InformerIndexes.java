package dev.metareactor.engine.informer;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.OwnerReference;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * The indexes every shared informer keeps, so that routing an event and collecting a parent's children are
 * lookups, never scans of every cached object.
 */
public final class InformerIndexes {

  /** Objects by the UID of their controller (the owner reference with {@code controller: true}). */
  public static final String CONTROLLER_UID = "controllerUid";

  /** Objects without a controller, by namespace ({@code ""} for cluster-scoped objects). */
  public static final String ORPHANS_BY_NAMESPACE = "orphansByNamespace";

  /**
   * Every object by each of its labels ({@link #labelKey}): what a label selector that requires a label selects is
   * found from that one label's bucket instead of a scan of the cache (orphans a parent may adopt, related objects
   * a customize rule selects).
   */
  public static final String BY_LABEL = "byLabel";

  private InformerIndexes() {}

  static Map<String, Function<GenericKubernetesResource, List<String>>> all() {
    return Map.of(
        CONTROLLER_UID, InformerIndexes::controllerUid,
        ORPHANS_BY_NAMESPACE, InformerIndexes::orphanNamespace,
        BY_LABEL, InformerIndexes::labels);
  }

  /** The {@link #BY_LABEL} key of one label. */
  public static String labelKey(String key, String value) {
    return key + "=" + value;
  }

  /** The controller reference of {@code object}, or {@code null} if it has none. */
  public static OwnerReference controllerOf(HasMetadata object) {
    List<OwnerReference> refs = object.getMetadata().getOwnerReferences();
    if (refs != null) {
      for (OwnerReference ref : refs) {
        if (Boolean.TRUE.equals(ref.getController())) {
          return ref;
        }
      }
    }
    return null;
  }

  private static List<String> controllerUid(GenericKubernetesResource object) {
    OwnerReference controller = controllerOf(object);
    return controller == null || controller.getUid() == null ? List.of() : List.of(controller.getUid());
  }

  private static List<String> orphanNamespace(GenericKubernetesResource object) {
    if (controllerOf(object) != null) {
      return List.of();
    }
    String namespace = object.getMetadata().getNamespace();
    return List.of(namespace == null ? "" : namespace);
  }

  private static List<String> labels(GenericKubernetesResource object) {
    Map<String, String> labels = object.getMetadata().getLabels();
    if (labels == null || labels.isEmpty()) {
      return List.of();
    }
    List<String> keys = new ArrayList<>(labels.size());
    labels.forEach((key, value) -> keys.add(labelKey(key, value)));
    return keys;
  }
}
