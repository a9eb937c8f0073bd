package dev.metareactor.apply;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.JsonNodeFactory;
import tools.jackson.databind.node.ObjectNode;

/**
 * The steady-state shortcut in {@link DynamicApply#update} skips the full merge when it can prove nothing
 * changes. This test generates many random desired objects and live objects derived from them (server
 * defaults added, owned fields drifted, list items reordered, repeated or dropped, types swapped) and checks
 * that the public result always equals the full merge's result.
 */
class SteadyStateAgreementTest {

  private static final JsonNodeFactory F = JsonNodeFactory.instance;
  private static final List<String> KEYS = List.of("a", "b", "name", "image", "port", "spec", "items", "status");

  @Test
  void shortcutAgreesWithFullMerge() {
    Random random = new Random(20261122L);
    int unchanged = 0;
    int changed = 0;
    for (int i = 0; i < 5_000; i++) {
      ObjectNode desired = F.objectNode();
      desired.put("apiVersion", "ex.com/v1").put("kind", "Thing");
      desired.putObject("metadata").put("name", "t" + i);
      desired.set("spec", randomObject(random, 3));

      ObjectNode observed = desired.deepCopy();
      ObjectNode metadata = (ObjectNode) observed.get("metadata");
      metadata.put("uid", "u-" + i).put("resourceVersion", "1");
      if (random.nextInt(3) > 0) {
        mutate(random, observed.get("spec"), 3);
      }
      LastAppliedConfiguration.write(observed, GoJson.marshal(desired));

      ApplyResult result = DynamicApply.update(observed, desired);
      ApplyResult full = DynamicApply.mergeUpdate(observed, desired, GoJson.marshal(desired));
      assertThat(result.changed()).as("case %d: %s over %s", i, desired, observed).isEqualTo(full.changed());
      assertThat(GoJson.marshal(result.object())).as("case %d", i).isEqualTo(GoJson.marshal(full.object()));
      if (result.changed()) {
        changed++;
      } else {
        unchanged++;
      }
    }
    // Both outcomes must be well represented, or the test proves little.
    assertThat(unchanged).isGreaterThan(1_000);
    assertThat(changed).isGreaterThan(1_000);
  }

  @Test
  void repeatedForeignKeysInLongAndShortListsAreChanges() {
    for (int size : new int[] {3, 40}) {
      ObjectNode desired = F.objectNode();
      desired.putObject("metadata").put("name", "t");
      ArrayNode items = desired.putObject("spec").putArray("items");
      for (int i = 0; i < size; i++) {
        items.addObject().put("name", "n" + i);
      }
      ObjectNode observed = desired.deepCopy();
      ArrayNode live = (ArrayNode) observed.at("/spec/items");
      live.addObject().put("name", "foreign").put("copy", 1);
      live.addObject().put("name", "foreign").put("copy", 2);
      LastAppliedConfiguration.write(observed, GoJson.marshal(desired));

      ApplyResult full = DynamicApply.mergeUpdate(observed, desired, GoJson.marshal(desired));
      assertThat(full.changed()).as("the merge rewrites both copies with the last one").isTrue();
      assertThat(DynamicApply.update(observed, desired).changed()).as("size %d", size).isTrue();
    }
  }

  private static ObjectNode randomObject(Random random, int depth) {
    ObjectNode object = F.objectNode();
    int size = 1 + random.nextInt(4);
    for (int i = 0; i < size; i++) {
      object.set(KEYS.get(random.nextInt(KEYS.size())), randomValue(random, depth - 1));
    }
    return object;
  }

  private static JsonNode randomValue(Random random, int depth) {
    int kind = depth <= 0 ? random.nextInt(4) : random.nextInt(7);
    return switch (kind) {
      case 0 -> F.numberNode(random.nextInt(5));
      case 1 -> F.stringNode("v" + random.nextInt(3));
      case 2 -> random.nextBoolean() ? F.nullNode() : F.booleanNode(random.nextBoolean());
      case 3 -> F.numberNode(random.nextInt(3) + 0.5);
      case 4 -> randomObject(random, depth);
      case 5 -> randomList(random, depth);
      default -> randomScalarList(random);
    };
  }

  private static ArrayNode randomList(Random random, int depth) {
    ArrayNode list = F.arrayNode();
    // Mostly short lists (compared pairwise), sometimes long ones (compared through an index).
    int size = random.nextInt(8) == 0 ? 17 + random.nextInt(20) : random.nextInt(4);
    String key = random.nextBoolean() ? "name" : "port";
    for (int i = 0; i < size; i++) {
      ObjectNode item = randomObject(random, depth);
      if (size > 16 || random.nextInt(8) > 0) {
        item.set(key, key.equals("port") ? F.numberNode(i) : F.stringNode("n" + i));
      }
      list.add(item);
    }
    return list;
  }

  private static ArrayNode randomScalarList(Random random) {
    ArrayNode list = F.arrayNode();
    int size = random.nextInt(3);
    for (int i = 0; i < size; i++) {
      list.add("s" + random.nextInt(3));
    }
    return list;
  }

  /** Changes the live object the way servers and other writers do. */
  private static void mutate(Random random, JsonNode node, int depth) {
    if (node instanceof ObjectNode object) {
      switch (random.nextInt(6)) {
        case 0 -> object.put("defaulted" + random.nextInt(2), random.nextInt(3));
        case 1 -> {
          if (!object.isEmpty()) {
            object.remove(object.propertyNames().iterator().next());
          }
        }
        case 2 -> {
          if (!object.isEmpty()) {
            object.set(object.propertyNames().iterator().next(), randomValue(random, depth - 1));
          }
        }
        default -> {
          for (JsonNode child : object.values()) {
            if (random.nextBoolean()) {
              mutate(random, child, depth - 1);
            }
          }
        }
      }
    } else if (node instanceof ArrayNode list && !list.isEmpty()) {
      switch (random.nextInt(5)) {
        case 0 -> {
          JsonNode copy = list.get(0).deepCopy(); // a repeated merge key, with different content
          if (copy instanceof ObjectNode item && random.nextBoolean()) {
            item.put("copy", true);
          }
          list.add(copy);
        }
        case 1 -> list.insert(0, list.remove(list.size() - 1)); // reordered
        case 2 -> list.remove(random.nextInt(list.size()));
        case 3 -> {
          if (list.get(0).isObject()) {
            list.add(F.objectNode().put("name", "foreign").put("port", 99)); // someone else's item
            if (random.nextBoolean()) {
              list.add(F.objectNode().put("name", "foreign").put("port", 99).put("again", true)); // repeated
            }
          }
        }
        default -> mutate(random, list.get(random.nextInt(list.size())), depth - 1);
      }
    }
  }
}
