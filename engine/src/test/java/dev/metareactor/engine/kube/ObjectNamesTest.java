package dev.metareactor.engine.kube;

import static org.assertj.core.api.Assertions.assertThat;

import dev.metareactor.engine.kube.ObjectNames.Rule;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** {@link ObjectNames}: Kubernetes' naming rules, per resource, as the API server applies them. */
class ObjectNamesTest {

  private static final ApiResource CONFIG_MAPS = resource("", "configmaps", true);
  private static final ApiResource WIDGETS = resource("example.com", "widgets", true);

  private static ApiResource resource(String group, String plural, boolean namespaced) {
    return new ApiResource(group, "v1", plural, "Kind", namespaced, Set.of());
  }

  @Test
  void eachResourceHasTheRuleTheApiServerHoldsItsNamesTo() {
    assertThat(ObjectNames.ruleFor(CONFIG_MAPS)).isEqualTo(Rule.DNS1123_SUBDOMAIN);
    assertThat(ObjectNames.ruleFor(WIDGETS)).as("a custom resource").isEqualTo(Rule.DNS1123_SUBDOMAIN);
    assertThat(ObjectNames.ruleFor(resource("apps", "deployments", true))).isEqualTo(Rule.DNS1123_SUBDOMAIN);
    assertThat(ObjectNames.ruleFor(resource("", "services", true))).isEqualTo(Rule.DNS1035_LABEL);
    assertThat(ObjectNames.ruleFor(resource("", "namespaces", false))).isEqualTo(Rule.DNS1123_LABEL);
    for (String rbac : Set.of("roles", "clusterroles", "rolebindings", "clusterrolebindings")) {
      assertThat(ObjectNames.ruleFor(resource("rbac.authorization.k8s.io", rbac, true))).isEqualTo(Rule.PATH_SEGMENT);
    }
    assertThat(ObjectNames.ruleFor(resource("certificates.k8s.io", "certificatesigningrequests", false)))
        .isEqualTo(Rule.PATH_SEGMENT);
    assertThat(ObjectNames.ruleFor(resource("example.com", "services", true))).as("not the core Service")
        .isEqualTo(Rule.DNS1123_SUBDOMAIN);
  }

  @Test
  void dns1123Subdomain() {
    Rule rule = Rule.DNS1123_SUBDOMAIN;
    for (String valid : new String[] {"a", "0", "a-b", "a.b", "web-0.pods.example.com", "x".repeat(253)}) {
      assertThat(rule.problem(valid)).as(valid).isEmpty();
    }
    for (String invalid : new String[] {"Bad_Name", "../x", "a/status", "-a", "a-", "a..b", ".a", "a.", "A",
        "a_b", "a:b", "a b", "é"}) {
      assertThat(rule.problem(invalid)).as(invalid).contains("is not " + rule.description());
    }
    assertThat(rule.problem("x".repeat(254))).contains("is 254 characters long, more than the 253 of "
        + rule.description());
    assertThat(rule.problem("")).contains("is empty");
  }

  @Test
  void dns1123LabelAndDns1035Label() {
    assertThat(Rule.DNS1123_LABEL.problem("0abc")).isEmpty();
    assertThat(Rule.DNS1123_LABEL.problem("x".repeat(63))).isEmpty();
    assertThat(Rule.DNS1123_LABEL.problem("x".repeat(64))).isPresent();
    assertThat(Rule.DNS1123_LABEL.problem("a.b")).as("no dots in a label").isPresent();
    assertThat(Rule.DNS1035_LABEL.problem("abc-1")).isEmpty();
    assertThat(Rule.DNS1035_LABEL.problem("0abc")).as("starts with a letter").isPresent();
    assertThat(Rule.DNS1035_LABEL.problem("x".repeat(64))).isPresent();
  }

  @Test
  void pathSegment() {
    Rule rule = Rule.PATH_SEGMENT;
    for (String valid : new String[] {"system:controller:x", "Any_Name", "..x", "a.b"}) {
      assertThat(rule.problem(valid)).as(valid).isEmpty();
    }
    for (String invalid : new String[] {".", "..", "a/b", "50%", ""}) {
      assertThat(rule.problem(invalid)).as(invalid).isPresent();
    }
  }

  @Test
  void aProblemNamesTheNamespaceOrTheNameAndTheRuleAndShowsOnlyTheStartOfALongOne() {
    assertThat(ObjectNames.problem(CONFIG_MAPS, "team", "ok")).isEmpty();
    assertThat(ObjectNames.problem(CONFIG_MAPS, "Team", "ok")).contains("namespace \"Team\" is not "
        + Rule.DNS1123_LABEL.description());
    assertThat(ObjectNames.problem(CONFIG_MAPS, "", "ok")).contains("namespace \"\" is empty");
    assertThat(ObjectNames.problem(resource("", "namespaces", false), "", "ok")).as("cluster-scoped: no namespace")
        .isEmpty();
    Optional<String> long300 = ObjectNames.problem(CONFIG_MAPS, "team", "y".repeat(300));
    assertThat(long300).hasValueSatisfying(problem -> assertThat(problem)
        .startsWith("name \"" + "y".repeat(80) + "\"... is 300 characters long"));
  }
}
