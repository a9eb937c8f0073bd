package dev.metareactor.engine.kube;

import java.util.Objects;
import org.jspecify.annotations.Nullable;
import tools.jackson.core.JsonParser;
import tools.jackson.core.JsonToken;

/**
 * Which object a write made and at which version: its UID and the resourceVersion the API server gave it. Read from
 * a write's answer without parsing the object ({@link #of}): the engine needs it for every write it makes, and
 * nothing else of most answers.
 *
 * @param uid the object's UID
 * @param resourceVersion the resourceVersion of the object as written
 */
public record ObjectVersion(String uid, String resourceVersion) {

  public ObjectVersion {
    Objects.requireNonNull(uid, "uid");
    Objects.requireNonNull(resourceVersion, "resourceVersion");
  }

  /**
   * The UID and resourceVersion in {@code json}'s {@code metadata}, read until both are found (the API server
   * writes {@code metadata} right after {@code apiVersion} and {@code kind}, so the rest is never read); {@code null}
   * when either is missing or the JSON is not an object.
   */
  public static @Nullable ObjectVersion of(byte[] json) {
    try (JsonParser parser = KubeJson.objectParser(json)) {
      if (parser.nextToken() != JsonToken.START_OBJECT) {
        return null;
      }
      while (parser.nextToken() == JsonToken.PROPERTY_NAME) {
        String field = parser.currentName();
        JsonToken value = parser.nextToken();
        if ("metadata".equals(field) && value == JsonToken.START_OBJECT) {
          return ofMetadata(parser);
        }
        parser.skipChildren();
      }
      return null;
    } catch (RuntimeException e) {
      return null; // not JSON: nothing to tell
    }
  }

  private static @Nullable ObjectVersion ofMetadata(JsonParser parser) {
    String uid = null;
    String resourceVersion = null;
    while (parser.nextToken() == JsonToken.PROPERTY_NAME) {
      String field = parser.currentName();
      JsonToken value = parser.nextToken();
      if (value == JsonToken.VALUE_STRING && "uid".equals(field)) {
        uid = parser.getString();
      } else if (value == JsonToken.VALUE_STRING && "resourceVersion".equals(field)) {
        resourceVersion = parser.getString();
      } else {
        parser.skipChildren();
      }
      if (uid != null && resourceVersion != null) {
        return new ObjectVersion(uid, resourceVersion);
      }
    }
    return null;
  }
}
