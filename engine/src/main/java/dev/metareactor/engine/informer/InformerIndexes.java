package dev.metareactor.engine.informer;

import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.engine.kube.OwnerRef;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

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

  /** Objects by namespace ({@code ""} for cluster-scoped objects). */
  public static final String NAMESPACE = "namespace";

  private InformerIndexes() {}

  static Map<String, Informer.IndexFunction> all() {
    return Map.of(
        CONTROLLER_UID, InformerIndexes::controllerUid,
        ORPHANS_BY_NAMESPACE, InformerIndexes::orphanNamespace,
        BY_LABEL, InformerIndexes::labels,
        NAMESPACE, object -> List.of(object.namespace()));
  }

  /** The {@link #BY_LABEL} key of one label. */
  public static String labelKey(String key, String value) {
    return key + "=" + value;
  }

  private static List<String> controllerUid(KubeObject object) {
    OwnerRef controller = object.controller();
    return controller == null || controller.uid().isEmpty() ? List.of() : List.of(controller.uid());
  }

  private static List<String> orphanNamespace(KubeObject object) {
    return object.controller() != null ? List.of() : List.of(object.namespace());
  }

  private static List<String> labels(KubeObject object) {
    Map<String, String> labels = object.labels();
    if (labels.isEmpty()) {
      return List.of();
    }
    List<String> keys = new ArrayList<>(labels.size());
    labels.forEach((key, value) -> keys.add(labelKey(key, value)));
    return keys;
  }
}
