package dev.metareactor.engine.controller.rolling;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Predicate;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.JsonNodeFactory;
import tools.jackson.databind.node.ObjectNode;

/**
 * The children one ControllerRevision claims, as its {@code children} field lists them:
 * {@code [{apiGroup, kind, names: [...]}]}. Immutable; the order of kinds and names is kept as read and new claims
 * are appended, so a revision whose claims did not change is written back byte for byte the same (and not at all).
 *
 * @param children the claimed children, in the revision's order, without duplicates
 */
public record RevisionClaims(List<ClaimedChild> children) {

  public static final RevisionClaims NONE = new RevisionClaims(List.of());

  public RevisionClaims {
    children = List.copyOf(new LinkedHashSet<>(children));
  }

  /**
   * The claims of a revision's {@code children} field; an absent or malformed field claims nothing, entries without
   * a kind and names that are not strings are skipped.
   */
  public static RevisionClaims read(JsonNode revisionChildren) {
    List<ClaimedChild> children = new ArrayList<>();
    for (JsonNode group : revisionChildren) {
      String apiGroup = group.path("apiGroup").asString("");
      String kind = group.path("kind").asString("");
      if (kind.isEmpty()) {
        continue;
      }
      for (JsonNode name : group.path("names")) {
        if (name.isString()) {
          children.add(new ClaimedChild(apiGroup, kind, name.stringValue()));
        }
      }
    }
    return new RevisionClaims(children);
  }

  public boolean contains(ClaimedChild child) {
    return children.contains(child);
  }

  public boolean isEmpty() {
    return children.isEmpty();
  }

  /** These claims and {@code child} (at the end of its kind's names), or these if already claimed. */
  public RevisionClaims with(ClaimedChild child) {
    if (contains(child)) {
      return this;
    }
    List<ClaimedChild> more = new ArrayList<>(children);
    more.add(child);
    return new RevisionClaims(more);
  }

  /** These claims without {@code child}. */
  public RevisionClaims without(ClaimedChild child) {
    return contains(child) ? keep(claimed -> !claimed.equals(child)) : this;
  }

  /** Only the claims {@code keep} accepts. */
  public RevisionClaims keep(Predicate<ClaimedChild> keep) {
    return new RevisionClaims(children.stream().filter(keep).toList());
  }

  /** The revision's {@code children} field: one entry per group and kind, in the order the kinds first appear. */
  public ArrayNode toJson() {
    JsonNodeFactory nodes = JsonNodeFactory.instance;
    ArrayNode groups = nodes.arrayNode();
    Set<String> written = new LinkedHashSet<>();
    for (ClaimedChild first : children) {
      if (!written.add(first.apiGroup() + "/" + first.kind())) {
        continue;
      }
      ObjectNode group = groups.addObject().put("apiGroup", first.apiGroup()).put("kind", first.kind());
      ArrayNode names = group.putArray("names");
      for (ClaimedChild child : children) {
        if (child.apiGroup().equals(first.apiGroup()) && child.kind().equals(first.kind())) {
          names.add(child.name());
        }
      }
    }
    return groups;
  }
}
