package dev.metareactor.engine.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.metareactor.engine.it.ParentCrd;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;

/**
 * Parents of a CompositeController of their own beside the {@link FaultLoad}: the ones a fault is aimed at, while
 * the load shows that the rest of the engine is not affected. Each parent {@code <name>} has one child
 * {@code <name>-c} (a ConfigMap, or an object of a custom resource) carrying the parent's {@code spec.value}, and
 * the hook answers the value as {@code status.value}: converged means both show the latest value.
 */
final class SideParents {

  final FaultLoad load;
  final ParentCrd crd;
  final List<String> names;
  /** The children's type; {@code null} for ConfigMaps. */
  private final @Nullable ParentCrd children;

  private SideParents(FaultLoad load, ParentCrd crd, List<String> names, @Nullable ParentCrd children) {
    this.load = load;
    this.crd = crd;
    this.names = List.copyOf(names);
    this.children = children;
  }

  /**
   * Creates the parents' type {@code kind}, the controller {@code <hostedBy>-<kind>} (labelled for the load's
   * engine) and the parents, with value {@code one}.
   *
   * @param children the children's type, {@code null} for ConfigMaps
   * @param hooks the controller's {@code hooks} (YAML, unindented)
   */
  static SideParents create(FaultLoad load, String kind, List<String> names, @Nullable ParentCrd children,
      String hooks) {
    ParentCrd crd = ParentCrd.create(load.cluster, kind);
    SideParents side = new SideParents(load, crd, names, children);
    side.applyController(hooks);
    names.forEach(name -> crd.in(load.client).resource(crd.object(load.cluster.namespace(), name,
        Map.of("value", "one"))).create());
    return side;
  }

  /** The controller's name. */
  String controller() {
    return load.hostedBy + "-" + crd.kind().toLowerCase(Locale.ROOT);
  }

  /** Applies the controller object (again) with these hooks. */
  void applyController(String hooks) {
    String childType = children == null ? "{apiVersion: v1, resource: configmaps, updateStrategy: {method: InPlace}}"
        : "{apiVersion: %s, resource: %s, updateStrategy: {method: InPlace}}".formatted(children.apiVersion(),
            children.plural());
    load.applyComposite(crd.kind().toLowerCase(Locale.ROOT), """
        generateSelector: true
        parentResource: {apiVersion: %s, resource: %s}
        childResources:
        - %s
        hooks:
        %s""".formatted(crd.apiVersion(), crd.plural(), childType, hooks.strip().indent(2)));
  }

  void setValue(String value) {
    names.forEach(name -> crd.in(load.client).withName(name).patch(PatchContext.of(PatchType.JSON_MERGE),
        "{\"spec\": {\"value\": \"" + value + "\"}}"));
  }

  /** The parents now, by name. */
  Map<String, GenericKubernetesResource> parents() {
    return crd.in(load.client).inNamespace(load.cluster.namespace()).list().getItems().stream()
        .collect(Collectors.toMap(parent -> parent.getMetadata().getName(), parent -> parent, (a, b) -> a,
            TreeMap::new));
  }

  /** Each child's value now, by name. */
  Map<String, String> childValues() {
    Map<String, String> values = new TreeMap<>();
    if (children == null) {
      for (ConfigMap child : load.client.configMaps().list().getItems()) {
        if (isChild(child.getMetadata().getName())) {
          values.put(child.getMetadata().getName(), child.getData() == null ? null : child.getData().get("value"));
        }
      }
    } else {
      for (GenericKubernetesResource child : children.in(load.client).inNamespace(load.cluster.namespace()).list()
          .getItems()) {
        if (isChild(child.getMetadata().getName())) {
          values.put(child.getMetadata().getName(), String.valueOf(((Map<?, ?>) child.getAdditionalProperties()
              .getOrDefault("spec", Map.of())).get("value")));
        }
      }
    }
    return values;
  }

  private boolean isChild(String name) {
    return name.endsWith("-c") && names.contains(name.substring(0, name.length() - 2));
  }

  /** Waits until every parent shows {@code value} in its status and its child carries it. */
  void awaitConverged(String value) {
    await().atMost(FaultSuite.CONVERGE).pollInterval(Duration.ofMillis(250)).untilAsserted(() -> {
      Map<String, GenericKubernetesResource> parents = parents();
      assertThat(parents.keySet()).containsExactlyInAnyOrderElementsOf(names);
      parents.values().forEach(parent -> assertThat(((Map<?, ?>) parent.getAdditionalProperties()
          .getOrDefault("status", Map.of())).get("value")).as("status.value of %s", parent.getMetadata().getName())
          .isEqualTo(value));
      Map<String, String> childValues = childValues();
      assertThat(childValues).hasSize(names.size());
      childValues.forEach((child, childValue) -> assertThat(childValue).as("value of child %s", child)
          .isEqualTo(value));
    });
  }

  /** The parents with a {@code SyncError} Event, each with its Events' messages. */
  Map<String, String> syncErrors() {
    return load.client.v1().events().list().getItems().stream()
        .filter(event -> "SyncError".equals(event.getReason()) && event.getInvolvedObject() != null
            && crd.kind().equals(event.getInvolvedObject().getKind()))
        .collect(Collectors.toMap(event -> event.getInvolvedObject().getName(), Event::getMessage,
            (a, b) -> a + " | " + b, TreeMap::new));
  }
}
