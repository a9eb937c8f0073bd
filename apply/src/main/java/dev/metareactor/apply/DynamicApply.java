package dev.metareactor.apply;

import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * Metacontroller's dynamic apply: given the observed child (or none) and the desired child a hook returned,
 * decides whether a write is needed and computes the complete object to write.
 *
 * <p>On <b>create</b> the desired object is written as is, plus the {@link LastAppliedConfiguration}
 * annotation (the engine adds the ControllerRef afterwards). On <b>update</b> the result is a
 * {@link ThreeWayMerge} of the observed object, the last-applied configuration and the desired object, after
 * which the {@linkplain #SYSTEM_METADATA_FIELDS system metadata fields} and {@code status} are put back to
 * their observed values (a controller never writes those through apply) and the annotation is refreshed. The
 * update is "changed" when that result is not {@linkplain JsonEquality#equal semantically equal} to the
 * observed object.
 *
 * <p>The common steady state — the hook returns exactly what it returned last time and nobody changed the
 * fields it owns — is recognised without copying the observed object or parsing its annotation, so a no-change
 * sync costs two read-only walks (comparing the desired object with the recorded annotation as it would be
 * serialized, then with the observed fields) and allocates next to nothing.
 *
 * <p>Inputs are never mutated. Stateless and thread-safe.
 */
public final class DynamicApply {

  /** Read-only, system-populated fields of ObjectMeta that apply always leaves as observed. */
  public static final List<String> SYSTEM_METADATA_FIELDS = List.of(
      "selfLink",
      "uid",
      "resourceVersion",
      "generation",
      "creationTimestamp",
      "deletionTimestamp",
      "deletionGracePeriodSeconds",
      "managedFields");

  private DynamicApply() {}

  /**
   * Creates or updates.
   *
   * @param observed the live object, or {@code null} when it does not exist yet
   * @param desired the object the hook asked for (only the fields it cares about)
   */
  public static ApplyResult apply(@Nullable JsonNode observed, JsonNode desired) {
    ObjectNode desiredObject = requireObject(desired, "desired");
    return observed == null || observed.isNull() || observed.isMissingNode()
        ? create(desiredObject)
        : update(requireObject(observed, "observed"), desiredObject);
  }

  /** The object to create: a copy of {@code desired} with its last-applied annotation. Always "changed". */
  public static ApplyResult create(ObjectNode desired) {
    Objects.requireNonNull(desired, "desired");
    String lastApplied = LastAppliedConfiguration.serialize(desired);
    ObjectNode object = desired.deepCopy();
    LastAppliedConfiguration.write(object, lastApplied);
    return new ApplyResult(true, object);
  }

  /**
   * The update of {@code observed} towards {@code desired}.
   *
   * @throws ApplyException when the observed last-applied annotation is not valid JSON, or the merged object
   *     has no {@code metadata} object to restore system fields into
   */
  public static ApplyResult update(ObjectNode observed, ObjectNode desired) {
    Objects.requireNonNull(observed, "observed");
    Objects.requireNonNull(desired, "desired");
    JsonNode desiredAnnotations = desired.path("metadata").path("annotations");
    if (desiredAnnotations.isObject() && desiredAnnotations.has(LastAppliedConfiguration.ANNOTATION)) {
      desired = LastAppliedConfiguration.withoutAnnotation(desired);
    }
    String recorded = LastAppliedConfiguration.raw(observed);
    if (recorded != null && GoJson.marshalsTo(desired, recorded) && SteadyState.unchanged(observed, desired)) {
      return new ApplyResult(false, observed);
    }
    return mergeUpdate(observed, desired, GoJson.marshal(desired));
  }

  /**
   * The update of {@code observed} towards {@code desired} when what was applied last is known otherwise than from
   * the annotation, which {@code observed} lacks (a child written by server-side apply before, whose applied fields
   * say it): the same merge with {@code lastApplied} in the annotation's place.
   *
   * @param lastApplied what was applied last; {@code null} for nothing
   */
  public static ApplyResult update(ObjectNode observed, @Nullable JsonNode lastApplied, ObjectNode desired) {
    Objects.requireNonNull(observed, "observed");
    Objects.requireNonNull(desired, "desired");
    ObjectNode wanted = LastAppliedConfiguration.withoutAnnotation(desired);
    return mergeUpdate(observed, lastApplied, wanted, GoJson.marshal(wanted));
  }

  /** The full three-way merge; {@code desired} has no last-applied annotation. */
  static ApplyResult mergeUpdate(ObjectNode observed, ObjectNode desired, String newLastApplied) {
    return mergeUpdate(observed, LastAppliedConfiguration.read(observed), desired, newLastApplied);
  }

  private static ApplyResult mergeUpdate(ObjectNode observed, @Nullable JsonNode lastApplied, ObjectNode desired,
      String newLastApplied) {
    ObjectNode merged = observed.deepCopy();
    ThreeWayMerge.mergeObject(merged, lastApplied != null && lastApplied.isObject() ? (ObjectNode) lastApplied : null,
        desired);
    restoreObserved(merged, observed);
    LastAppliedConfiguration.write(merged, newLastApplied);

    boolean changed = !JsonEquality.equal(merged, observed);
    return new ApplyResult(changed, changed ? merged : observed);
  }

  /** Puts system metadata and status back to their observed values, or removes them where observed has none. */
  private static void restoreObserved(ObjectNode merged, ObjectNode observed) {
    JsonNode observedMetadata = observed.get("metadata");
    JsonNode mergedMetadata = merged.get("metadata");
    if (mergedMetadata == null || !mergedMetadata.isObject()) {
      if (observedMetadata != null && observedMetadata.isObject() && hasAnySystemField(observedMetadata)) {
        throw new ApplyException("failed to revert ObjectMeta system fields: .metadata is not an object");
      }
    } else {
      ObjectNode metadata = (ObjectNode) mergedMetadata;
      for (String field : SYSTEM_METADATA_FIELDS) {
        JsonNode value = observedMetadata == null ? null : observedMetadata.get(field);
        if (value == null) {
          metadata.remove(field);
        } else {
          metadata.set(field, value.deepCopy());
        }
      }
    }
    JsonNode status = observed.get("status");
    if (status == null) {
      merged.remove("status");
    } else {
      merged.set("status", status.deepCopy());
    }
  }

  private static boolean hasAnySystemField(JsonNode metadata) {
    for (String field : SYSTEM_METADATA_FIELDS) {
      if (metadata.has(field)) {
        return true;
      }
    }
    return false;
  }

  private static ObjectNode requireObject(JsonNode node, String name) {
    Objects.requireNonNull(node, name);
    if (!node.isObject()) {
      throw new ApplyException(name + " object must be a JSON object, got " + node.getNodeType());
    }
    return (ObjectNode) node;
  }
}
