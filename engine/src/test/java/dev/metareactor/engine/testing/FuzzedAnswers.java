package dev.metareactor.engine.testing;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.function.Consumer;
import java.util.function.Predicate;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.JsonNodeFactory;
import tools.jackson.databind.node.ObjectNode;

/**
 * Generated sync answers for the fuzz tests of the sync path ({@link AnswerRules}): well-formed answers
 * asking for a random set of children (kept, dropped, renamed, added, some named like objects that are not the
 * parent's), and answers broken or hostile in one or more places — a wrong JSON type at every field, fields absent or
 * {@code null}, names the API server refuses ({@code Bad_Name}, {@code ../x}, {@code a/status}, 300 characters,
 * empty, unicode, {@code %2F}...), kinds not declared, children in another namespace, duplicates, odd
 * {@code resyncAfterSeconds} (huge, negative, zero, NaN, infinite), labels and annotations under the engine's own
 * keys, deep nesting within the parse limits, {@code events} with garbage.
 *
 * <p>Each answer comes with what a reader of the hook contract expects of it, decided here from how it was built and
 * not by the engine's code: {@link Verdict#INVALID} (the engine must refuse it whole), {@link Verdict#VALID} (it
 * must converge to it, by the delete rules) or {@link Verdict#UNDECIDED} (a shape the contract does not settle, such
 * as annotations that are not an object: either is fine, but nothing outside the rules may happen).
 *
 * <p>Everything of a case is drawn from the one {@link SplittableRandom} it is given ({@link FuzzCases}), so the same
 * seed gives the same case.
 */
public final class FuzzedAnswers {

  private static final JsonNodeFactory NODES = JsonNodeFactory.instance;
  /** Kubernetes' DNS-1123 subdomain, as its validation writes it (the engine checks character by character). */
  private static final Pattern SUBDOMAIN =
      Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");
  /** Kubernetes' DNS-1123 label: namespaces. */
  private static final Pattern LABEL = Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?");
  /** Kubernetes' DNS-1035 label: Services. */
  private static final Pattern DNS1035 = Pattern.compile("[a-z]([-a-z0-9]*[a-z0-9])?");

  /** The prefix of the labels the engine keeps for itself (a replica's shard). */
  public static final String SHARD_PREFIX = "shard.metareactor.dev/";
  /** The reason of every Event a generated answer asks for, followed by a number. */
  public static final String EVENT_REASON = "Fuzzed";

  /** What is expected of an answer. */
  public enum Verdict {
    /** The engine converges to it, by the delete rules. */
    VALID,
    /** The engine refuses it whole: nothing written. */
    INVALID,
    /** Either, as long as nothing happens outside the rules. */
    UNDECIDED;

    Verdict and(Verdict other) {
      return this == INVALID || other == INVALID ? INVALID : this == UNDECIDED || other == UNDECIDED ? UNDECIDED
          : VALID;
    }
  }

  /**
   * The kind of object an answer lists.
   *
   * @param contentField where its content goes ({@code data}, {@code spec})
   */
  public record ChildKind(String apiVersion, String kind, String contentField) {}

  /**
   * What a kind of controller's answers look like.
   *
   * @param ownedField {@code children}, {@code attachments} or {@code outputs}
   * @param declared the one child type the controller declares
   * @param undeclared types it does not declare (another version, another group, another kind)
   * @param namespace the parent's namespace
   * @param engineLabels labels the engine sets on every child itself, which answers forge
   * @param engineAnnotations annotations the engine sets on every child itself, which answers forge
   * @param targetMetadata whether the answer carries {@code labels} and {@code annotations} for the synced object
   *     itself (a DecoratorController)
   * @param traps names of objects that are there but not the sync's to write (someone else's, another parent's,
   *     one the caches do not show...), which answers sometimes ask for
   * @param owner the synced object, whose ControllerRef answers echo or forge
   */
  public record Shape(String ownedField, ChildKind declared, List<ChildKind> undeclared, String namespace,
      List<String> engineLabels, List<String> engineAnnotations, boolean targetMetadata, List<String> traps,
      Owner owner) {
    public Shape {
      undeclared = List.copyOf(undeclared);
      engineLabels = List.copyOf(engineLabels);
      engineAnnotations = List.copyOf(engineAnnotations);
      traps = List.copyOf(traps);
    }
  }

  /** The synced object, as its children's owner references name it. */
  public record Owner(String apiVersion, String kind, String name, String uid) {}

  /**
   * A child the parent has before the sync.
   *
   * @param value its content's {@code value}
   * @param deleting whether it is being deleted already
   */
  public record Observed(String name, String value, boolean deleting) {}

  /**
   * A generated answer.
   *
   * @param body the answer as the hook gives it
   * @param verdict what is expected of it
   * @param shapes what was generated that is not well-formed, for the run's tally and for messages
   * @param childrenGiven whether it has its children field as a list
   * @param desired the names of the children it asks for (meaningful unless {@link Verdict#INVALID})
   * @param resyncExpected whether the sync must complete with a resync delay
   * @param hookEvents how many Events it asks for
   */
  public record Answer(JsonNode body, Verdict verdict, List<String> shapes, boolean childrenGiven,
      Set<String> desired, boolean resyncExpected, int hookEvents) {
    public Answer {
      shapes = List.copyOf(shapes);
      desired = Set.copyOf(desired);
    }
  }

  /** One case: the children the parent has, and the hook's answer. */
  public record Case(List<Observed> observed, Answer answer) {
    public Case {
      observed = List.copyOf(observed);
    }

    /** The observed children not being deleted. */
    public Set<String> live() {
      Set<String> live = new LinkedHashSet<>();
      observed.stream().filter(child -> !child.deleting()).forEach(child -> live.add(child.name()));
      return live;
    }

    /** Every observed child's name. */
    public Set<String> observedNames() {
      Set<String> names = new LinkedHashSet<>();
      observed.forEach(child -> names.add(child.name()));
      return names;
    }

    @Override
    public String toString() {
      return "observed " + observed + ", " + answer.verdict() + " " + answer.shapes() + ": " + answer.body();
    }
  }

  /** Whether the API server takes {@code name} for an object of most resources (a DNS-1123 subdomain). */
  public static boolean validName(String name) {
    return name.length() <= 253 && SUBDOMAIN.matcher(name).matches();
  }

  /** Whether the API server takes {@code name} for a namespace (a DNS-1123 label). */
  public static boolean validNamespace(String name) {
    return name.length() <= 63 && LABEL.matcher(name).matches();
  }

  /** Whether the API server takes {@code name} for a Service (a DNS-1035 label). */
  public static boolean validServiceName(String name) {
    return name.length() <= 63 && DNS1035.matcher(name).matches();
  }

  private final Shape shape;

  /** Generates answers of {@code shape}. */
  public FuzzedAnswers(Shape shape) {
    this.shape = Objects.requireNonNull(shape, "shape");
  }

  /**
   * One case drawn from {@code random}: 0 to 6 observed children ({@code c0} to {@code c7}, one in ten being deleted
   * already), and an answer that keeps some of them and asks for up to three more ({@code n0} to {@code n3} and the
   * shape's traps), often broken somewhere.
   */
  public Case next(SplittableRandom random) {
    List<Observed> observed = new ArrayList<>();
    List<Integer> indexes = shuffled(random, List.of(0, 1, 2, 3, 4, 5, 6, 7));
    int count = random.nextInt(7);
    for (int i = 0; i < count; i++) {
      observed.add(new Observed("c" + indexes.get(i), random.nextBoolean() ? "a" : "b", random.nextInt(10) == 0));
    }
    return new Case(observed, answer(random, observed));
  }

  private Answer answer(SplittableRandom random, List<Observed> observed) {
    List<String> newNames = new ArrayList<>(List.of("n0", "n1", "n2", "n3"));
    newNames.addAll(shape.traps());
    List<String> chosen = new ArrayList<>(someOf(random, observed.stream().map(Observed::name).toList(),
        observed.size()));
    chosen.addAll(someOf(random, newNames, 3));
    List<Child> children = new ArrayList<>();
    for (String name : shuffled(random, chosen)) {
      children.add(child(random, name));
    }
    ChildrenForm form = ChildrenForm.values()[weighted(random, 17, 1, 1, 1)];
    ObjectNode body = NODES.objectNode();
    List<String> shapes = new ArrayList<>();
    Verdict verdict = Verdict.VALID;
    Set<String> desired = new LinkedHashSet<>();
    switch (form) {
      case LIST -> {
        ArrayNode list = body.putArray(shape.ownedField());
        for (Child child : children) {
          list.add(child.node());
          verdict = verdict.and(child.verdict());
          if (child.shape() != null) {
            shapes.add(child.shape());
          }
          if (child.name() != null && !desired.add(child.name())) {
            verdict = Verdict.INVALID;
            shapes.add("renamed like another child");
          }
        }
        if (random.nextInt(10) == 0 && !children.isEmpty()) {
          list.add(pick(random, children).node().deepCopy());
          verdict = Verdict.INVALID;
          shapes.add("duplicate child");
        }
      }
      case ABSENT -> shapes.add("children absent");
      case NULL -> {
        body.putNull(shape.ownedField());
        shapes.add("children null");
      }
      case WRONG_TYPE -> {
        body.set(shape.ownedField(), wrongType(random, JsonNodeKind.ARRAY_OR_NULL));
        verdict = Verdict.INVALID;
        shapes.add("children of a wrong type");
      }
    }
    verdict = put(body, "status", status(random), verdict, shapes);
    Resync resync = resync(random);
    verdict = put(body, "resyncAfterSeconds", resync.part(), verdict, shapes);
    Events events = events(random);
    verdict = put(body, "events", events.part(), verdict, shapes);
    verdict = put(body, "finalized", finalized(random), verdict, shapes);
    verdict = put(body, "metareactorFuzz", unknownField(random), verdict, shapes);
    if (shape.targetMetadata()) {
      verdict = put(body, "labels", targetMap(random, "labels"), verdict, shapes);
      verdict = put(body, "annotations", targetMap(random, "annotations"), verdict, shapes);
    }
    JsonNode whole = body;
    if (random.nextInt(41) == 0) {
      whole = anyJson(random, node -> !node.isObject());
      verdict = Verdict.INVALID;
      shapes.add(0, "answer not an object");
    }
    boolean given = form == ChildrenForm.LIST;
    return new Answer(whole, verdict, shapes, given, given ? desired : Set.of(), resync.expected(),
        events.count());
  }

  private static Verdict put(ObjectNode body, String field, Part part, Verdict verdict, List<String> shapes) {
    if (part.node() != null) {
      body.set(field, part.node());
    }
    if (part.shape() != null) {
      shapes.add(part.shape());
    }
    return verdict.and(part.verdict());
  }

  /** How the children field is given (in the order of {@link #answer}'s weights). */
  private enum ChildrenForm { LIST, ABSENT, NULL, WRONG_TYPE }

  /**
   * A part of an answer: the JSON to put ({@code null}: leave the field out), what is expected of it, and what it is
   * ({@code null}: nothing odd).
   */
  private record Part(@Nullable JsonNode node, Verdict verdict, @Nullable String shape) {
    static final Part ABSENT = new Part(null, Verdict.VALID, null);

    static Part valid(JsonNode node) {
      return new Part(node, Verdict.VALID, null);
    }

    static Part invalid(JsonNode node, String shape) {
      return new Part(node, Verdict.INVALID, shape);
    }
  }

  /** {@code resyncAfterSeconds}, and whether the sync must end with a resync delay. */
  private record Resync(Part part, boolean expected) {}

  /** {@code events}, and how many the sync records. */
  private record Events(Part part, int count) {}

  // --- children ------------------------------------------------------------------------------------------------

  /**
   * One child of an answer.
   *
   * @param name the name it asks for when it is well-formed enough to have one; {@code null} when not
   */
  private record Child(JsonNode node, @Nullable String name, Verdict verdict, @Nullable String shape) {}

  /** A well-formed child of the declared kind named {@code name}, one in nine then broken by a {@link Defect}. */
  private Child child(SplittableRandom random, String name) {
    ObjectNode child = NODES.objectNode().put("apiVersion", shape.declared().apiVersion())
        .put("kind", shape.declared().kind());
    ObjectNode metadata = child.putObject("metadata").put("name", name);
    switch (random.nextInt(4)) { // the namespace: absent, the parent's, or empty or null (both mean the parent's)
      case 0 -> { }
      case 1 -> metadata.put("namespace", shape.namespace());
      case 2 -> metadata.put("namespace", "");
      default -> metadata.putNull("namespace");
    }
    List<String> labels = new ArrayList<>(List.of("app", SHARD_PREFIX + "cc.things", SHARD_PREFIX + "x"));
    labels.addAll(shape.engineLabels());
    stringMap(random, metadata, "labels", labels);
    List<String> annotations = new ArrayList<>(List.of("note", SHARD_PREFIX + "x"));
    annotations.addAll(shape.engineAnnotations());
    stringMap(random, metadata, "annotations", annotations);
    child.putObject(shape.declared().contentField()).put("value", pick(random, List.of("a", "b", "c")));
    if (random.nextInt(9) != 0) {
      return new Child(child, name, Verdict.VALID, null);
    }
    Defect[] defects = Defect.values();
    int[] weights = new int[defects.length];
    for (int i = 0; i < defects.length; i++) {
      weights[i] = defects[i].weight;
    }
    return defect(random, defects[weighted(random, weights)], child, name);
  }

  /**
   * Puts in {@code field} of {@code metadata} nothing, {@code null}, or an object of some of {@code keys} (the
   * engine's own among them) with one string value of the hook's.
   */
  private static void stringMap(SplittableRandom random, ObjectNode metadata, String field, List<String> keys) {
    switch (weighted(random, 3, 1, 4)) {
      case 0 -> { }
      case 1 -> metadata.putNull(field);
      default -> {
        ObjectNode map = metadata.putObject(field);
        String value = pick(random, List.of("x", "forged", "", "v1"));
        someOf(random, keys, keys.size()).forEach(key -> map.put(key, value));
      }
    }
  }

  /** What may be wrong with a child, each with its weight. */
  private enum Defect {
    HOSTILE_NAME(12), NOT_AN_OBJECT(1), API_VERSION_OF_A_WRONG_TYPE(1), API_VERSION_ABSENT(1), KIND_OF_A_WRONG_TYPE(1),
    KIND_ABSENT(1), UNDECLARED_KIND(2), METADATA_OF_A_WRONG_TYPE(1), NAME_OF_A_WRONG_TYPE(1), ANOTHER_NAMESPACE(2),
    NAMESPACE_OF_A_WRONG_TYPE(1), LABELS_OF_A_WRONG_TYPE(1), A_LABEL_OF_A_WRONG_TYPE(1), ANNOTATIONS_OF_A_WRONG_TYPE(1),
    AN_ANNOTATION_OF_A_WRONG_TYPE(1), OWNER_REFERENCES(3), A_SYSTEM_METADATA_FIELD(1), DEEP_NESTING(1);

    final int weight;

    Defect(int weight) {
      this.weight = weight;
    }
  }

  private Child defect(SplittableRandom random, Defect defect, ObjectNode child, String name) {
    ObjectNode metadata = (ObjectNode) child.get("metadata");
    return switch (defect) {
      case HOSTILE_NAME -> {
        String hostile = hostileName(random);
        metadata.put("name", hostile);
        boolean valid = validName(hostile);
        yield new Child(child, hostile, valid ? Verdict.VALID : Verdict.INVALID,
            valid ? "renamed to a valid odd name" : "hostile name");
      }
      case NOT_AN_OBJECT -> new Child(anyJson(random, node -> !node.isObject()), null, Verdict.INVALID,
          "child not an object");
      case API_VERSION_OF_A_WRONG_TYPE, KIND_OF_A_WRONG_TYPE -> {
        String field = defect == Defect.KIND_OF_A_WRONG_TYPE ? "kind" : "apiVersion";
        child.set(field, wrongType(random, JsonNodeKind.NON_EMPTY_STRING));
        yield new Child(child, null, Verdict.INVALID, field + " of a wrong type");
      }
      case API_VERSION_ABSENT, KIND_ABSENT -> {
        String field = defect == Defect.KIND_ABSENT ? "kind" : "apiVersion";
        child.remove(field);
        yield new Child(child, null, Verdict.INVALID, field + " absent");
      }
      case UNDECLARED_KIND -> {
        ChildKind kind = pick(random, shape.undeclared());
        child.put("apiVersion", kind.apiVersion()).put("kind", kind.kind());
        yield new Child(child, null, Verdict.INVALID, "undeclared kind");
      }
      case METADATA_OF_A_WRONG_TYPE -> {
        child.set("metadata", wrongType(random, JsonNodeKind.OBJECT));
        yield new Child(child, null, Verdict.INVALID, "metadata of a wrong type");
      }
      case NAME_OF_A_WRONG_TYPE -> {
        metadata.set("name", wrongType(random, JsonNodeKind.NON_EMPTY_STRING));
        yield new Child(child, null, Verdict.INVALID, "name of a wrong type");
      }
      case ANOTHER_NAMESPACE -> {
        metadata.put("namespace", pick(random, List.of("elsewhere", "Team", "kube-system", "../x", "team ", "a/b",
            "%2F", "x".repeat(64))));
        yield new Child(child, null, Verdict.INVALID, "another namespace");
      }
      case NAMESPACE_OF_A_WRONG_TYPE -> {
        metadata.set("namespace", wrongType(random, JsonNodeKind.STRING_OR_NULL));
        yield new Child(child, null, Verdict.INVALID, "namespace of a wrong type");
      }
      case LABELS_OF_A_WRONG_TYPE -> {
        metadata.set("labels", wrongType(random, JsonNodeKind.OBJECT_OR_NULL));
        yield new Child(child, name, Verdict.INVALID, "labels of a wrong type");
      }
      case A_LABEL_OF_A_WRONG_TYPE -> {
        objectIn(metadata, "labels").set("app", wrongType(random, JsonNodeKind.STRING));
        yield new Child(child, name, Verdict.INVALID, "a label of a wrong type");
      }
      case ANNOTATIONS_OF_A_WRONG_TYPE -> {
        metadata.set("annotations", wrongType(random, JsonNodeKind.OBJECT_OR_NULL));
        yield new Child(child, name, Verdict.UNDECIDED, "annotations of a wrong type");
      }
      case AN_ANNOTATION_OF_A_WRONG_TYPE -> {
        objectIn(metadata, "annotations").set("note", wrongType(random, JsonNodeKind.STRING));
        yield new Child(child, name, Verdict.UNDECIDED, "an annotation of a wrong type");
      }
      case OWNER_REFERENCES -> {
        Part refs = ownerReferences(random);
        metadata.set("ownerReferences", Objects.requireNonNull(refs.node()));
        yield new Child(child, name, refs.verdict(), refs.shape());
      }
      case A_SYSTEM_METADATA_FIELD -> {
        metadata.put(pick(random, List.of("uid", "resourceVersion", "creationTimestamp", "deletionTimestamp",
            "generation", "managedFields", "selfLink")), "1");
        yield new Child(child, name, Verdict.UNDECIDED, "a system metadata field");
      }
      case DEEP_NESTING -> {
        ObjectNode deepest = (ObjectNode) child.get(shape.declared().contentField());
        int depth = 1 + random.nextInt(180);
        for (int i = 0; i < depth; i++) {
          deepest = deepest.putObject("deeper");
        }
        deepest.put("bottom", true);
        yield new Child(child, name, Verdict.VALID, "deep nesting");
      }
    };
  }

  /** The object {@code field} of {@code parent}, put there when it is not one. */
  private static ObjectNode objectIn(ObjectNode parent, String field) {
    return parent.get(field) instanceof ObjectNode object ? object : parent.putObject(field);
  }

  /**
   * ownerReferences a hook may give: the parent's own ControllerRef echoed, another owner (never as controller), and
   * those the API server refuses or that would take the child from its parent: another controller, the parent not as
   * controller, another owner of the parent's name (dynamic apply merges owner references by name), one without a
   * field the API server requires or with a flag that is not a boolean, garbage.
   */
  private Part ownerReferences(SplittableRandom random) {
    Owner owner = shape.owner();
    ArrayNode refs = NODES.arrayNode();
    return switch (random.nextInt(10)) {
      case 0 -> {
        refs.addObject().put("apiVersion", owner.apiVersion()).put("kind", owner.kind()).put("name", owner.name())
            .put("uid", owner.uid()).put("controller", true).put("blockOwnerDeletion", true);
        yield Part.valid(refs);
      }
      case 1 -> {
        refs.addObject().put("apiVersion", "v1").put("kind", "Secret").put("name", "other").put("uid", "other-uid");
        yield Part.valid(refs);
      }
      case 2 -> Part.valid(refs);
      case 3 -> {
        refs.addObject().put("apiVersion", "v1").put("kind", "Secret").put("name", "victim").put("uid", "victim-uid")
            .put("controller", true);
        yield Part.invalid(refs, "ownerReferences to another controller");
      }
      case 4 -> {
        refs.addObject().put("apiVersion", owner.apiVersion()).put("kind", owner.kind()).put("name", owner.name())
            .put("uid", "victim-uid").put("controller", true);
        yield Part.invalid(refs, "ownerReferences to another controller");
      }
      case 5 -> {
        refs.addObject().put("apiVersion", owner.apiVersion()).put("kind", owner.kind()).put("name", owner.name())
            .put("uid", owner.uid()).put("controller", false);
        yield Part.invalid(refs, "ownerReferences to the parent, not as controller");
      }
      case 6 -> {
        refs.addObject().put("apiVersion", "v1").put("kind", "Secret").put("name", owner.name())
            .put("uid", "other-uid");
        yield Part.invalid(refs, "ownerReferences to another owner of the parent's name");
      }
      case 7 -> Part.invalid(NODES.stringNode("garbage"), "ownerReferences of a wrong type");
      case 8 -> Part.invalid(refs.add("garbage"), "ownerReferences of a wrong type");
      default -> {
        ObjectNode ref = refs.addObject().put("apiVersion", owner.apiVersion()).put("kind", owner.kind())
            .put("name", owner.name()).put("uid", owner.uid());
        switch (random.nextInt(4)) {
          case 0 -> ref.remove("uid");
          case 1 -> ref.put("kind", "");
          case 2 -> ref.put("apiVersion", "apps/");
          default -> ref.put("controller", "true");
        }
        yield Part.invalid(refs, "ownerReferences the API server refuses");
      }
    };
  }

  /** Names the API server refuses (or takes, though odd): one of the brief's, or a random string of any character. */
  private static String hostileName(SplittableRandom random) {
    if (random.nextBoolean()) {
      return pick(random, HOSTILE_NAMES);
    }
    StringBuilder name = new StringBuilder();
    int length = random.nextInt(21);
    for (int i = 0; i < length; i++) {
      switch (random.nextInt(5)) {
        case 0 -> name.append("abcxyz0189-.".charAt(random.nextInt(12))); // now and then a valid name
        case 1 -> name.append((char) (0x20 + random.nextInt(0x5f))); // printable ASCII
        case 2 -> name.append((char) random.nextInt(0x20)); // control characters
        case 3 -> { // any character of the Basic Multilingual Plane but a lone surrogate
          int c = random.nextInt(0x10000 - 0x800);
          name.append((char) (c < 0xd800 ? c : c + 0x800));
        }
        default -> name.appendCodePoint(0x10000 + random.nextInt(0x100000)); // beyond it: a surrogate pair
      }
    }
    return name.toString();
  }

  private static final List<String> HOSTILE_NAMES = List.of("Bad_Name", "../x", "a/status", "x".repeat(300), "",
      "ünïcode", "%2F", "a%2Fb", ".", "..", "-a", "a-", "UPPER", "a..b", "a.-b", "a b", " a", "a\nb", "a\u0000b",
      "😀", "ｆｕｌｌ", "a\u200bb", "a?b", "a#b", "a;b", "a".repeat(253), "a".repeat(254), "a.b.c", "0", "x/..",
      "status");

  // --- the rest of an answer -----------------------------------------------------------------------------------

  private static Part status(SplittableRandom random) {
    return switch (weighted(random, 3, 1, 4, 1, 1)) {
      case 0 -> Part.ABSENT;
      case 1 -> Part.valid(NODES.nullNode());
      case 2 -> Part.valid(NODES.objectNode().put("phase", pick(random, List.of("ready", "", "ünïcode"))));
      case 3 -> {
        ObjectNode deep = NODES.objectNode();
        ObjectNode deepest = deep;
        for (int i = 0; i < 150; i++) {
          deepest = deepest.putObject("deeper");
        }
        yield new Part(deep, Verdict.VALID, "deep status");
      }
      default -> Part.invalid(wrongType(random, JsonNodeKind.OBJECT_OR_NULL), "status of a wrong type");
    };
  }

  /** Numbers of every size and sign (NaN and infinities as a tree may hold them), and other types. */
  private static Resync resync(SplittableRandom random) {
    return switch (weighted(random, 12, 1, 1)) {
      case 0 -> pick(random, RESYNCS);
      case 1 -> new Resync(Part.invalid(NODES.stringNode(pick(random, List.of("NaN", "Infinity", "5", ""))),
          "resync of a wrong type"), false);
      default -> new Resync(Part.invalid(wrongType(random, JsonNodeKind.NUMBER_OR_NULL), "resync of a wrong type"),
          false);
    };
  }

  private static final List<Resync> RESYNCS = List.of(
      new Resync(Part.ABSENT, false),
      new Resync(Part.valid(NODES.nullNode()), false),
      new Resync(Part.valid(NODES.numberNode(30)), true),
      new Resync(Part.valid(NODES.numberNode(0.5)), true),
      new Resync(new Part(NODES.numberNode(0), Verdict.VALID, "resync 0"), false),
      new Resync(new Part(NODES.numberNode(-5), Verdict.VALID, "resync negative"), false),
      new Resync(new Part(NODES.numberNode(-1e308), Verdict.VALID, "resync negative"), false),
      new Resync(new Part(NODES.numberNode(1e-9), Verdict.VALID, "resync tiny"), true),
      new Resync(new Part(NODES.numberNode(1e308), Verdict.VALID, "resync huge"), true),
      new Resync(new Part(NODES.numberNode(Long.MAX_VALUE), Verdict.VALID, "resync huge"), true),
      new Resync(new Part(NODES.numberNode(new BigInteger("1" + "0".repeat(399))), Verdict.VALID, "resync huge"),
          true),
      new Resync(new Part(NODES.numberNode(new BigInteger("-1" + "0".repeat(399))), Verdict.VALID,
          "resync negative"), false),
      new Resync(new Part(NODES.numberNode(new BigDecimal("1e-400")), Verdict.VALID, "resync NaN-ish"), false),
      new Resync(new Part(NODES.numberNode(Double.POSITIVE_INFINITY), Verdict.VALID, "resync NaN-ish"), true),
      new Resync(new Part(NODES.numberNode(Double.NEGATIVE_INFINITY), Verdict.VALID, "resync NaN-ish"), false),
      new Resync(new Part(NODES.numberNode(Double.NaN), Verdict.VALID, "resync NaN-ish"), false));

  /** None, up to three well-formed ones (one with a message of 5,000 characters), or garbage of every kind. */
  private static Events events(SplittableRandom random) {
    switch (weighted(random, 6, 5, 1)) {
      case 0 -> {
        return new Events(Part.ABSENT, 0);
      }
      case 1 -> {
        int count = random.nextInt(4);
        ArrayNode events = NODES.arrayNode();
        for (int i = 0; i < count; i++) {
          events.addObject().put("type", i % 2 == 0 ? "Normal" : "Warning").put("reason", EVENT_REASON + i)
              .put("message", i == 2 ? "m".repeat(5000) : "fuzzed event " + i);
        }
        return new Events(Part.valid(events), count);
      }
      default -> {
        JsonNode garbage = switch (random.nextInt(3)) {
          case 0 -> wrongType(random, JsonNodeKind.ARRAY_OR_NULL);
          case 1 -> pick(random, BAD_EVENTS);
          default -> NODES.arrayNode().add(anyJson(random, node -> !node.isObject()));
        };
        return new Events(Part.invalid(garbage.deepCopy(), "events with garbage"), 0);
      }
    }
  }

  private static final List<JsonNode> BAD_EVENTS = List.of(eventWith(e -> e.put("type", "Error")),
      eventWith(e -> e.put("type", 1)), eventWith(e -> e.put("reason", "bad reason!")),
      eventWith(e -> e.put("reason", "")), eventWith(e -> e.put("reason", "R".repeat(129))),
      eventWith(e -> e.put("message", "")), eventWith(e -> e.put("message", "  ")),
      eventWith(e -> e.remove("message")), eventWith(e -> e.put("extra", "x")),
      eventWith(e -> e.putNull("reason")), tooManyEvents());

  /** A list of one Event, {@code edit}ed. */
  private static JsonNode eventWith(Consumer<ObjectNode> edit) {
    ArrayNode events = NODES.arrayNode();
    ObjectNode event = events.addObject().put("type", "Normal").put("reason", EVENT_REASON + "0")
        .put("message", "fuzzed");
    edit.accept(event);
    return events;
  }

  private static JsonNode tooManyEvents() {
    ArrayNode events = NODES.arrayNode();
    for (int i = 0; i < 21; i++) {
      events.addObject().put("type", "Normal").put("reason", EVENT_REASON + i).put("message", "one too many");
    }
    return events;
  }

  /** {@code finalized}: ignored in a sync answer unless it is not a boolean. */
  private static Part finalized(SplittableRandom random) {
    return switch (weighted(random, 8, 3, 1)) {
      case 0 -> Part.ABSENT;
      case 1 -> Part.valid(NODES.booleanNode(random.nextBoolean()));
      default -> Part.invalid(wrongType(random, JsonNodeKind.BOOLEAN_OR_NULL), "finalized of a wrong type");
    };
  }

  /** A field no kind knows: a v1 hook's answer may carry one (logged and ignored). */
  private static Part unknownField(SplittableRandom random) {
    return random.nextInt(8) != 0 ? Part.ABSENT
        : new Part(anyJson(random, node -> true), Verdict.VALID, "an unknown field");
  }

  /**
   * A DecoratorController's {@code labels} or {@code annotations} for its target: keys set, removed ({@code null})
   * or under the engine's prefix, or of a wrong type.
   */
  private static Part targetMap(SplittableRandom random, String field) {
    switch (weighted(random, 3, 1, 5, 1)) {
      case 0 -> {
        return Part.ABSENT;
      }
      case 1 -> {
        return Part.valid(NODES.nullNode());
      }
      case 2 -> {
        ObjectNode map = NODES.objectNode();
        String value = pick(random, List.of("front", "back", "", "yes"));
        boolean removing = random.nextBoolean();
        for (String key : someOf(random, List.of("tier", "decorate", "owner", SHARD_PREFIX + "dec.tagger",
            SHARD_PREFIX + "x"), 5)) {
          if (removing && !key.equals("decorate")) {
            map.putNull(key);
          } else {
            map.put(key, value);
          }
        }
        return Part.valid(map);
      }
      default -> {
        String target = "the target's " + field;
        return random.nextBoolean()
            ? Part.invalid(wrongType(random, JsonNodeKind.OBJECT_OR_NULL), target + " of a wrong type")
            : Part.invalid(NODES.objectNode().set("tier", wrongType(random, JsonNodeKind.STRING_OR_NULL)),
                target + " with a value of a wrong type");
      }
    }
  }

  // --- drawing -------------------------------------------------------------------------------------------------

  /** An index of {@code weights}, each drawn in proportion to its weight. */
  private static int weighted(SplittableRandom random, int... weights) {
    int total = 0;
    for (int weight : weights) {
      total += weight;
    }
    int roll = random.nextInt(total);
    for (int i = 0; i < weights.length; i++) {
      roll -= weights[i];
      if (roll < 0) {
        return i;
      }
    }
    throw new AssertionError("unreachable");
  }

  private static <T> T pick(SplittableRandom random, List<T> values) {
    return values.get(random.nextInt(values.size()));
  }

  private static <T> List<T> shuffled(SplittableRandom random, List<T> values) {
    List<T> shuffled = new ArrayList<>(values);
    for (int i = shuffled.size() - 1; i > 0; i--) {
      Collections.swap(shuffled, i, random.nextInt(i + 1));
    }
    return shuffled;
  }

  /** Up to {@code max} of {@code values}, in a random order; each count as likely. */
  private static <T> List<T> someOf(SplittableRandom random, List<T> values, int max) {
    return shuffled(random, values).subList(0, random.nextInt(Math.min(max, values.size()) + 1));
  }

  // --- JSON of any type ----------------------------------------------------------------------------------------

  /** The JSON types a field may be given, for choosing the wrong ones. */
  private enum JsonNodeKind {
    OBJECT, OBJECT_OR_NULL, ARRAY_OR_NULL, STRING, STRING_OR_NULL, NON_EMPTY_STRING, NUMBER_OR_NULL,
    BOOLEAN_OR_NULL;

    boolean accepts(JsonNode node) {
      return switch (this) {
        case OBJECT -> node.isObject();
        case OBJECT_OR_NULL -> node.isObject() || node.isNull();
        case ARRAY_OR_NULL -> node.isArray() || node.isNull();
        case STRING -> node.isString();
        case STRING_OR_NULL -> node.isString() || node.isNull();
        case NON_EMPTY_STRING -> node.isString() && !node.stringValue().isEmpty();
        case NUMBER_OR_NULL -> node.isNumber() || node.isNull();
        case BOOLEAN_OR_NULL -> node.isBoolean() || node.isNull();
      };
    }
  }

  /** JSON of any type that {@code right} does not accept (absence is generated apart). */
  private static JsonNode wrongType(SplittableRandom random, JsonNodeKind right) {
    return anyJson(random, node -> !right.accepts(node));
  }

  /**
   * A JSON value as {@code wanted}, each type as likely as the others: strings (empty too), numbers, booleans,
   * {@code null}, arrays, objects. A new node each time: the caller may put it in an answer.
   */
  private static JsonNode anyJson(SplittableRandom random, Predicate<JsonNode> wanted) {
    List<List<JsonNode>> groups = ANY_JSON.stream().map(group -> group.stream().filter(wanted).toList())
        .filter(group -> !group.isEmpty()).toList();
    return pick(random, pick(random, groups)).deepCopy();
  }

  /** Values of each JSON type, a group per type. */
  private static final List<List<JsonNode>> ANY_JSON = List.of(
      List.of(NODES.stringNode(""), NODES.stringNode("x"), NODES.stringNode("Bad_Name"), NODES.stringNode("ünïcode")),
      List.of(NODES.numberNode(0), NODES.numberNode(-1), NODES.numberNode(5), NODES.numberNode(Integer.MAX_VALUE),
          NODES.numberNode(0.5), NODES.numberNode(-1e308), NODES.numberNode(1e308)),
      List.of(NODES.booleanNode(true), NODES.booleanNode(false)),
      List.of(NODES.nullNode()),
      List.of(NODES.arrayNode(), NODES.arrayNode().add(1).add("x")),
      List.of(NODES.objectNode(), NODES.objectNode().put("name", "x")));
}
