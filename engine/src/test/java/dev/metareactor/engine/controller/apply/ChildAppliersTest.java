package dev.metareactor.engine.controller.apply;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.metareactor.apply.DynamicApply;
import dev.metareactor.engine.config.ApplyStrategy;
import dev.metareactor.engine.kube.ApiException;
import dev.metareactor.engine.kube.ApiResource;
import dev.metareactor.engine.kube.KubeJson;
import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.engine.testing.RecordingApi;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * What each applier sends for a child, from its cached state: nothing for a converged one, and otherwise exactly the
 * requests its strategy needs ({@link RecordingApi} answers applies with the object as kept, not merged).
 */
class ChildAppliersTest {

  private static final ApiResource CONFIG_MAPS = new ApiResource("", "v1", "configmaps", "ConfigMap", true, Set.of());
  private static final String MANAGER = "metacontroller";

  private static final KubeObject PARENT = KubeObject.of(json("""
      {"apiVersion":"example.com/v1","kind":"Site","metadata":{"name":"p","namespace":"ns","uid":"p1"}}"""));
  private static final String CONTROLLER_REF = """
      {"apiVersion":"example.com/v1","kind":"Site","name":"p","uid":"p1","controller":true,
       "blockOwnerDeletion":true}""";
  private static final String APPLIED_FIELDS = """
      {"f:data":{"f:value":{}},"f:metadata":{"f:ownerReferences":{"k:{\\"uid\\":\\"p1\\"}":{".":{},
        "f:apiVersion":{},"f:blockOwnerDeletion":{},"f:controller":{},"f:kind":{},"f:name":{},"f:uid":{}}}}}""";

  private final RecordingApi api = new RecordingApi();
  private final ChildApplier serverSide = ChildApplier.of(ApplyStrategy.SERVER_SIDE_APPLY, api, MANAGER);
  private final ChildApplier dynamic = ChildApplier.of(ApplyStrategy.DYNAMIC_APPLY, api, MANAGER);

  private static ObjectNode json(String text) {
    return (ObjectNode) KubeJson.mapper().readTree(text);
  }

  private static ObjectNode desired(String value) {
    return json("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"c\",\"namespace\":\"ns\"},"
        + "\"data\":{\"value\":\"" + value + "\"}}");
  }

  /** A child as the API server stores it after an apply of {@code data.value} by the manager. */
  private static ObjectNode appliedChild(String value) {
    return json("""
        {"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"ns","uid":"c1",
         "resourceVersion":"7","ownerReferences":[%s],
         "managedFields":[{"manager":"metacontroller","operation":"Apply","apiVersion":"v1","fieldsType":"FieldsV1",
           "fieldsV1":%s}]},
         "data":{"value":"%s"}}""".formatted(CONTROLLER_REF, APPLIED_FIELDS, value));
  }

  /** A child as dynamic apply wrote it: the annotation, and the writer's Update entry. */
  private static ObjectNode dynamicChild(String value) {
    String lastApplied = "{\\\"apiVersion\\\":\\\"v1\\\",\\\"data\\\":{\\\"extra\\\":\\\"x\\\",\\\"value\\\":\\\""
        + value + "\\\"},\\\"kind\\\":\\\"ConfigMap\\\",\\\"metadata\\\":{\\\"name\\\":\\\"c\\\","
        + "\\\"namespace\\\":\\\"ns\\\"}}";
    return json("""
        {"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"ns","uid":"c1",
         "resourceVersion":"7","ownerReferences":[%s],
         "annotations":{"metacontroller.k8s.io/last-applied-configuration":"%s"},
         "managedFields":[{"manager":"metareactor","operation":"Update","apiVersion":"v1","fieldsType":"FieldsV1",
           "fieldsV1":{"f:data":{".":{},"f:extra":{},"f:value":{}},"f:metadata":{"f:annotations":{".":{},
             "f:metacontroller.k8s.io/last-applied-configuration":{}}}}}]},
         "data":{"value":"%s","extra":"x"}}""".formatted(CONTROLLER_REF, lastApplied, value));
  }

  private static KubeObject cached(ObjectNode stored) {
    return KubeObject.parse(KubeJson.bytes(stored), MANAGER);
  }

  private ObjectNode body(int action) {
    return json(api.actions().get(action).body());
  }

  @Test
  void aNewChildIsAppliedWithItsControllerRefAndNoAnnotation() {
    serverSide.create(PARENT, CONFIG_MAPS, desired("v1")).block();

    assertThat(api.actions()).as("an apply that can only create").extracting(Object::toString)
        .containsExactly("apply-create configmaps ns/c");
    ObjectNode body = body(0);
    assertThat(body.at("/metadata/ownerReferences/0")).isEqualTo(json(CONTROLLER_REF));
    assertThat(body.at("/metadata/annotations").isMissingNode()).isTrue();
    assertThat(body.at("/data/value").asString()).isEqualTo("v1");
  }

  @Test
  void eitherStrategyRefusesToCreateOverAnObjectOfTheNameAndLeavesItAsItIs() {
    ObjectNode foreign = json("""
        {"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"ns","uid":"theirs",
         "resourceVersion":"3","labels":{"app":"mine"}},"data":{"value":"mine"}}""");
    api.holding(CONFIG_MAPS, foreign);

    for (ChildApplier applier : List.of(serverSide, dynamic)) {
      assertThatThrownBy(() -> applier.create(PARENT, CONFIG_MAPS, desired("v1")).block()).as("%s", applier)
          .satisfies(e -> assertThat(ApiException.codeOf(e)).isEqualTo(409));
    }
    assertThat(api.actions()).extracting(Object::toString)
        .containsExactly("apply-create configmaps ns/c", "create configmaps ns/c");
    assertThat(api.object(CONFIG_MAPS, "ns", "c").orElseThrow().toTree()).isEqualTo(foreign);
  }

  @Test
  void aConvergedChildCostsNothingAndDriftOrANewValueIsAppliedOnce() {
    assertThat(serverSide.change(PARENT, CONFIG_MAPS, cached(appliedChild("v1")), desired("v1"))).isNull();

    ObjectNode edited = appliedChild("edited");
    ((ObjectNode) edited.get("metadata")).put("resourceVersion", "8");
    ChildApplier.Change drift = serverSide.change(PARENT, CONFIG_MAPS, cached(edited), desired("v1"));
    assertThat(drift).isNotNull();
    ChildApplier.Change newValue = serverSide.change(PARENT, CONFIG_MAPS, cached(appliedChild("v1")),
        desired("v2"));
    assertThat(newValue).isNotNull();
    assertThat(api.actions()).as("deciding sends nothing").isEmpty();

    newValue.write().block();
    assertThat(api.actions()).extracting(Object::toString).containsExactly("apply configmaps ns/c");
  }

  @Test
  void aVerdictIsRememberedForTheResourceVersionAndDesiredObject() {
    KubeObject converged = cached(appliedChild("v1"));
    assertThat(serverSide.change(PARENT, CONFIG_MAPS, converged, desired("v1"))).isNull();
    // The same resourceVersion with other content cannot happen; that it is not looked at shows the verdict is kept.
    ObjectNode sameVersion = appliedChild("edited");
    assertThat(serverSide.change(PARENT, CONFIG_MAPS, cached(sameVersion), desired("v1"))).isNull();
    assertThat(serverSide.change(PARENT, CONFIG_MAPS, converged, desired("v2"))).as("another desired object")
        .isNotNull();
  }

  /**
   * Dynamic apply remembers its verdict too: a converged child is merged once, and its resyncs are judged by the
   * resourceVersion and the desired object alone until either changes.
   */
  @Test
  void dynamicApplyRemembersAConvergedChildsVerdictForItsResourceVersionAndDesiredObject() {
    ObjectNode stored = DynamicApply.create(desired("v1")).object();
    ((ObjectNode) stored.get("metadata")).put("uid", "c1").put("resourceVersion", "7")
        .set("ownerReferences", KubeJson.mapper().readTree("[" + CONTROLLER_REF + "]"));
    KubeObject converged = cached(stored);
    assertThat(dynamic.change(PARENT, CONFIG_MAPS, converged, desired("v1"))).isNull();

    // The same resourceVersion with other content cannot happen; that it is not looked at shows the verdict is kept.
    ObjectNode sameVersion = stored.deepCopy();
    ((ObjectNode) sameVersion.get("data")).put("value", "edited");
    assertThat(dynamic.change(PARENT, CONFIG_MAPS, cached(sameVersion), desired("v1"))).isNull();
    // A new resourceVersion, or another desired object, is judged again.
    ((ObjectNode) sameVersion.get("metadata")).put("resourceVersion", "8");
    assertThat(dynamic.change(PARENT, CONFIG_MAPS, cached(sameVersion), desired("v1"))).as("drift").isNotNull();
    assertThat(dynamic.change(PARENT, CONFIG_MAPS, converged, desired("v2"))).as("another desired object")
        .isNotNull();
    assertThat(api.actions()).as("deciding sends nothing").isEmpty();
  }

  @Test
  void aValueTheServerKeepsOtherwiseIsAppliedOnceThenRememberedUntilTheObjectChanges() {
    api.holding(CONFIG_MAPS, appliedChild("v1"));
    // "v1 " stands for a value the server normalises: the kept object still says v1 after the apply.
    ChildApplier.Change change = serverSide.change(PARENT, CONFIG_MAPS, cached(appliedChild("v1")), desired("v1 "));
    change.write().block();
    assertThat(api.actions()).hasSize(1);

    assertThat(serverSide.change(PARENT, CONFIG_MAPS, cached(appliedChild("v1")), desired("v1 ")))
        .as("the same configuration over the same resourceVersion").isNull();
    ObjectNode later = appliedChild("v1");
    ((ObjectNode) later.get("metadata")).put("resourceVersion", "8");
    assertThat(serverSide.change(PARENT, CONFIG_MAPS, cached(later), desired("v1 "))).as("the object changed")
        .isNotNull();
  }

  @Test
  void recreateIsConfirmedByADryRunAndAnUnconfirmedChangeIsRemembered() {
    api.holding(CONFIG_MAPS, appliedChild("v1"));
    ChildApplier.Change change = serverSide.change(PARENT, CONFIG_MAPS, cached(appliedChild("v1")), desired("v1 "));

    assertThat(change.confirmed().block()).as("the dry run's object is the observed one").isFalse();
    assertThat(api.actions()).extracting(Object::toString).containsExactly("apply-dry-run configmaps ns/c");
    assertThat(serverSide.change(PARENT, CONFIG_MAPS, cached(appliedChild("v1")), desired("v1 "))).isNull();
  }

  @Test
  void aDynamicallyAppliedChildIsLeftWhileConvergedAndHandedOverOnItsFirstChange() {
    ObjectNode stored = dynamicChild("v1");
    api.holding(CONFIG_MAPS, stored);
    ObjectNode withExtra = desired("v1");
    ((ObjectNode) withExtra.get("data")).put("extra", "x");
    assertThat(serverSide.change(PARENT, CONFIG_MAPS, cached(stored), withExtra)).isNull();

    serverSide.change(PARENT, CONFIG_MAPS, cached(stored), desired("v2")).write().block();

    assertThat(api.actions()).extracting(Object::toString)
        .containsExactly("get configmaps ns/c", "patch configmaps ns/c", "apply configmaps ns/c");
    JsonNode patch = KubeJson.mapper().readTree(api.actions().get(1).body());
    assertThat(patch.at("/0/value/0/manager").asString()).isEqualTo("metareactor");
    assertThat(patch.at("/0/value/0/fieldsV1")).as("what the annotation did not name stays with its writer")
        .isEqualTo(json("{\"f:metadata\":{\"f:annotations\":{\".\":{}}}}"));
    assertThat(patch.at("/0/value/1/manager").asString()).isEqualTo(MANAGER);
    assertThat(patch.at("/0/value/1/operation").asString()).isEqualTo("Apply");
    assertThat(patch.at("/0/value/1/fieldsV1")).isEqualTo(json("{\"f:data\":{\".\":{},\"f:extra\":{},"
        + "\"f:value\":{}}}"));
    assertThat(patch.at("/1/value").asString()).isEqualTo("7");
    assertThat(patch.at("/2/op").asString()).isEqualTo("remove");
    assertThat(body(2).at("/data")).isEqualTo(json("{\"value\":\"v2\"}"));
  }

  @Test
  void dynamicApplyJudgesAServerSideAppliedChildByItsFieldsAndRecordsTheAnnotationOnItsFirstWrite() {
    ObjectNode stored = appliedChild("v1");
    ((ObjectNode) stored.get("data")).put("mine", "someone else's");
    assertThat(dynamic.change(PARENT, CONFIG_MAPS, cached(stored), desired("v1"))).isNull();

    dynamic.change(PARENT, CONFIG_MAPS, cached(stored), desired("v2")).write().block();

    assertThat(api.actions()).extracting(Object::toString).containsExactly("update configmaps ns/c");
    ObjectNode written = body(0);
    assertThat(written.at("/data")).isEqualTo(json("{\"value\":\"v2\",\"mine\":\"someone else's\"}"));
    assertThat(written.at("/metadata/annotations/metacontroller.k8s.io~1last-applied-configuration").asString())
        .contains("\"value\":\"v2\"");
    assertThat(written.at("/metadata/ownerReferences")).hasSize(1);
  }
}
