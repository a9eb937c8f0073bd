package dev.metareactor.engine.controller.rolling;

import dev.metareactor.engine.controller.ChildSelector;
import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.engine.kube.OwnerRef;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.JsonNodeFactory;
import tools.jackson.databind.node.ObjectNode;

/**
 * A parent's ControllerRevision ({@code controllerrevisions.metacontroller.k8s.io}) as Metacontroller writes it, so
 * that either engine adopts the other's: in the parent's namespace, named by {@link RevisionName}, labelled so the
 * parent's selector finds it ({@code controller-uid} with {@code generateSelector}, else the parent's
 * {@code spec.template.metadata.labels}) plus the parent resource's group and plural, controlled by the parent, with
 * the {@code parentPatch} it records and the {@code children} it claims.
 *
 * @param name the revision's name
 * @param uid its UID ({@code null} for one not created yet)
 * @param resourceVersion its resourceVersion, the precondition of an update ({@code null} when not created yet)
 * @param parentPatch the recorded parent fields, as stored
 * @param claims the children it claims
 */
public record RevisionObject(String name, @Nullable String uid, @Nullable String resourceVersion,
    JsonNode parentPatch, RevisionClaims claims) {

  public static final String API_VERSION = "metacontroller.k8s.io/v1alpha1";
  public static final String KIND = "ControllerRevision";
  /** The label with the parent resource's API group: revisions of different parent types never mix. */
  public static final String API_GROUP_LABEL = "metacontroller.k8s.io/apiGroup";
  /** The label with the parent resource's plural name. */
  public static final String RESOURCE_LABEL = "metacontroller.k8s.io/resource";

  public RevisionObject {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(parentPatch, "parentPatch");
    Objects.requireNonNull(claims, "claims");
  }

  /** A revision read from the cache; a missing {@code parentPatch} reads as an empty object. */
  public static RevisionObject read(KubeObject revision) {
    JsonNode tree = revision.toTree();
    JsonNode patch = tree.get("parentPatch");
    return new RevisionObject(revision.name(), revision.uid(), revision.resourceVersion(),
        patch == null || patch.isNull() ? JsonNodeFactory.instance.objectNode() : patch,
        RevisionClaims.read(tree.path("children")));
  }

  /** The revision a parent's current state needs, claiming nothing yet. */
  public static RevisionObject latest(String plural, String group, KubeObject parent, RevisionPatch patch) {
    return new RevisionObject(RevisionName.of(plural, group, parent.storedUid(), patch.goJson()), null, null,
        patch.fields(), RevisionClaims.NONE);
  }

  /** The same revision claiming {@code claims}. */
  public RevisionObject claiming(RevisionClaims claims) {
    return new RevisionObject(name, uid, resourceVersion, parentPatch, claims);
  }

  /**
   * The labels of {@code parent}'s revisions: what its selector matches, and the parent resource's group and plural.
   *
   * @throws IllegalArgumentException when the parent's {@code spec.template.metadata.labels} are not a map of strings
   */
  public static Map<String, String> labels(String plural, String group, KubeObject parent,
      boolean generateSelector) {
    Map<String, String> labels = new LinkedHashMap<>();
    if (generateSelector) {
      labels.put(ChildSelector.CONTROLLER_UID_LABEL, parent.storedUid());
    } else {
      JsonNode template = parent.toTree().path("spec").path("template").path("metadata").path("labels");
      if (!template.isMissingNode() && !template.isNull()) {
        if (!template.isObject()) {
          throw new IllegalArgumentException("invalid labels on parent " + parent.describe()
              + ": spec.template.metadata.labels is not a map");
        }
        for (Map.Entry<String, JsonNode> label : template.properties()) {
          if (!label.getValue().isString()) {
            throw new IllegalArgumentException("invalid labels on parent " + parent.describe()
                + ": spec.template.metadata.labels." + label.getKey() + " is not a string");
          }
          labels.put(label.getKey(), label.getValue().stringValue());
        }
      }
    }
    labels.put(API_GROUP_LABEL, group);
    labels.put(RESOURCE_LABEL, plural);
    return labels;
  }

  /**
   * The object to create or update: this revision, in {@code parent}'s namespace, with {@code labels} and the
   * parent as controller (and, for an update, this revision's resourceVersion as precondition).
   */
  public ObjectNode toObject(KubeObject parent, Map<String, String> labels) {
    JsonNodeFactory nodes = JsonNodeFactory.instance;
    ObjectNode object = nodes.objectNode().put("apiVersion", API_VERSION).put("kind", KIND);
    ObjectNode metadata = object.putObject("metadata").put("name", name);
    if (!parent.namespace().isEmpty()) {
      metadata.put("namespace", parent.namespace());
    }
    if (resourceVersion != null) {
      metadata.put("resourceVersion", resourceVersion);
    }
    ObjectNode labelNode = metadata.putObject("labels");
    labels.forEach(labelNode::put);
    OwnerRef.controllerOf(parent).appendTo(metadata.putArray("ownerReferences"));
    object.set("parentPatch", parentPatch.deepCopy());
    if (!claims.isEmpty()) {
      object.set("children", claims.toJson());
    }
    return object;
  }
}
