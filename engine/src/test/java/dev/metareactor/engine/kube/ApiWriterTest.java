package dev.metareactor.engine.kube;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.node.ObjectNode;

class ApiWriterTest {

  @Test
  void bodyWritesNumbersAsGoDoes() {
    ObjectNode deployment = (ObjectNode) KubeJson.mapper().readTree("""
        {"kind":"Deployment","apiVersion":"apps/v1","metadata":{"name":"d"},
         "spec":{"replicas":3.0,"minReadySeconds":1E+1,"progressDeadlineSeconds":-0.0,
                 "template":{"metadata":{"annotations":{"big":"1e20"}}},"x":1e20,"y":123456789012345678901234}}""");

    assertThat(new String(ApiWriter.body(deployment), StandardCharsets.UTF_8)).isEqualTo(
        "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"d\"},"
            + "\"spec\":{\"minReadySeconds\":10,\"progressDeadlineSeconds\":-0,\"replicas\":3,"
            + "\"template\":{\"metadata\":{\"annotations\":{\"big\":\"1e20\"}}},"
            + "\"x\":100000000000000000000,\"y\":1.2345678901234569e+23}}");
  }
}
