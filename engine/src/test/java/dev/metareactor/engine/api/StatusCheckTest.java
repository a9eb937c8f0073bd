package dev.metareactor.engine.api;

import static org.assertj.core.api.Assertions.assertThat;

import dev.metareactor.engine.kube.KubeJson;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

class StatusCheckTest {

  private static final JsonNode POD = KubeJson.mapper().readTree("{\"status\":{\"conditions\":["
      + "{\"type\":\"Ready\",\"status\":\"False\",\"reason\":\"Starting\"},"
      + "{\"type\":\"Scheduled\",\"status\":true}]}}");

  @Test
  void aCheckNamesWhatIsMissingOrDifferentAsMetacontrollerDoes() {
    assertThat(new StatusCheck("Ready", null, null).failureOn(POD)).isEmpty();
    assertThat(new StatusCheck("Ready", "True", null).failureOn(POD))
        .contains("\"Ready\" condition status is \"False\" (want \"True\")");
    assertThat(new StatusCheck("Ready", "False", "Up").failureOn(POD))
        .contains("\"Ready\" condition reason is \"Starting\" (want \"Up\")");
    assertThat(new StatusCheck("Ready", "False", "Starting").failureOn(POD)).isEmpty();
    assertThat(new StatusCheck("Healthy", null, null).failureOn(POD))
        .contains("required condition type missing: \"Healthy\"");
    // A status that is not a string reads as empty.
    assertThat(new StatusCheck("Scheduled", "True", null).failureOn(POD))
        .contains("\"Scheduled\" condition status is \"\" (want \"True\")");
    assertThat(new StatusCheck("Ready", null, null).failureOn(KubeJson.mapper().readTree("{}")))
        .contains("required condition type missing: \"Ready\"");
  }
}
