package dev.metareactor.engine.controller.map;

import dev.metareactor.engine.controller.SyncKey;
import dev.metareactor.engine.kube.ApiResource;
import dev.metareactor.engine.kube.KubeObject;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A MapController's unit of work: one input of one parent, named by the input's UID (its {@code mapKey}).
 *
 * <p>Two keys are equal when they name the same parent and mapKey, whatever they say about where the input is: the
 * work queue then serializes everything about one input (an event of the input itself, of one of its outputs, a
 * resync), and one input is never mapped twice at once. {@link #input} is where the input was last seen (from its
 * own event, or from the annotation its outputs carry); {@code null} when unknown, in which case the input counts as
 * gone.
 *
 * @param namespace the parent's namespace ({@code ""} when cluster-scoped)
 * @param name the parent's name
 * @param mapKey the input's UID
 * @param input where the input is, or {@code null}
 */
public record MapKey(String namespace, String name, String mapKey, @Nullable InputRef input) implements SyncKey {

  /** Where an input is: its resource, namespace ({@code ""} when cluster-scoped) and name. */
  public record InputRef(ApiResource resource, String namespace, String name) {
    public InputRef {
      Objects.requireNonNull(resource, "resource");
      Objects.requireNonNull(namespace, "namespace");
      Objects.requireNonNull(name, "name");
    }

    /**
     * How outputs name their input for people ({@code <resource>.<group>/<namespace>/<name>}, the group left out for
     * the core group and the namespace for a cluster-scoped input).
     */
    @Override
    public String toString() {
      return nameOf(resource) + "/" + KubeObject.namespacedName(namespace, name);
    }

    /** {@code <resource>.<group>}, or {@code <resource>} for the core group: how {@link #toString} names it. */
    static String nameOf(ApiResource resource) {
      return resource.group().isEmpty() ? resource.resource() : resource.resource() + "." + resource.group();
    }
  }

  public MapKey {
    Objects.requireNonNull(namespace, "namespace");
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(mapKey, "mapKey");
  }

  @Override
  public boolean equals(Object other) {
    return other instanceof MapKey key && key.mapKey.equals(mapKey) && key.name.equals(name)
        && key.namespace.equals(namespace);
  }

  @Override
  public int hashCode() {
    return Objects.hash(namespace, name, mapKey);
  }

  @Override
  public String about() {
    return "input " + (input == null ? mapKey : input.toString()) + ": ";
  }

  @Override
  public String toString() {
    return KubeObject.namespacedName(namespace, name) + " input " + (input == null ? mapKey : input + " " + mapKey);
  }
}
