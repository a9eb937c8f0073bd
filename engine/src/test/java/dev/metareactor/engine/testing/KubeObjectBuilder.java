package dev.metareactor.engine.testing;

import dev.metareactor.engine.kube.ApiResource;
import dev.metareactor.engine.kube.KubeJson;
import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.engine.kube.OwnerRef;
import tools.jackson.databind.node.ObjectNode;

/**
 * Builds the {@link KubeObject}s unit tests feed to routers and syncs, saying only what a test is about (a label, a
 * finalizer, a ControllerRef) instead of writing the whole JSON each time. {@link #nextVersionOf} starts from an
 * object already built, for the state an update event carries.
 */
public final class KubeObjectBuilder {

  private final ObjectNode object;

  private KubeObjectBuilder(ObjectNode object) {
    this.object = object;
  }

  /**
   * An object of {@code resource} as the API server stores it: UID {@code <name>-uid}, resourceVersion 1 and
   * generation 1. {@code namespace} is left out when empty (a cluster-scoped object).
   */
  public static KubeObjectBuilder object(ApiResource resource, String namespace, String name) {
    ObjectNode object = KubeJson.nodes().objectNode().put("apiVersion", resource.apiVersion())
        .put("kind", resource.kind());
    ObjectNode metadata = object.putObject("metadata").put("name", name);
    if (!namespace.isEmpty()) {
      metadata.put("namespace", namespace);
    }
    metadata.put("uid", name + "-uid").put("resourceVersion", "1").put("generation", 1);
    return new KubeObjectBuilder(object);
  }

  /**
   * {@code object} as the API server stores it after a write: the same content with the next resourceVersion (an
   * event with an unchanged resourceVersion is a resync).
   */
  public static KubeObjectBuilder nextVersionOf(KubeObject object) {
    long next = Long.parseLong(object.resourceVersion()) + 1;
    return new KubeObjectBuilder(object.toTree()).resourceVersion(Long.toString(next));
  }

  public KubeObjectBuilder uid(String uid) {
    metadata().put("uid", uid);
    return this;
  }

  public KubeObjectBuilder resourceVersion(String resourceVersion) {
    metadata().put("resourceVersion", resourceVersion);
    return this;
  }

  /** {@code metadata.generation}; 0 leaves it out, as for objects whose resource does not keep one. */
  public KubeObjectBuilder generation(long generation) {
    if (generation == 0) {
      metadata().remove("generation");
    } else {
      metadata().put("generation", generation);
    }
    return this;
  }

  public KubeObjectBuilder label(String key, String value) {
    metadata().withObjectProperty("labels").put(key, value);
    return this;
  }

  public KubeObjectBuilder annotation(String key, String value) {
    metadata().withObjectProperty("annotations").put(key, value);
    return this;
  }

  public KubeObjectBuilder finalizer(String name) {
    metadata().withArrayProperty("finalizers").add(name);
    return this;
  }

  /** Makes {@code owner} the object's only owner, as its controller ({@code null}: no owner at all). */
  public KubeObjectBuilder controlledBy(KubeObject owner) {
    metadata().remove("ownerReferences");
    if (owner != null) {
      OwnerRef.controllerOf(owner).appendTo(metadata().putArray("ownerReferences"));
    }
    return this;
  }

  /** Starts the object's deletion (it waits for its finalizers). */
  public KubeObjectBuilder deleting() {
    metadata().put("deletionTimestamp", "2024-01-01T00:00:00Z");
    return this;
  }

  /** Sets a top-level field ({@code spec}, {@code status}) to {@code json}. */
  public KubeObjectBuilder field(String name, String json) {
    object.set(name, KubeJson.mapper().readTree(json));
    return this;
  }

  public KubeObject build() {
    return KubeObject.of(object.deepCopy());
  }

  private ObjectNode metadata() {
    return (ObjectNode) object.get("metadata");
  }
}
