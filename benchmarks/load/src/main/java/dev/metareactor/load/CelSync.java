package dev.metareactor.load;

import java.util.stream.Collectors;
import java.util.stream.IntStream;

/**
 * The Go hook's {@code /sync} ({@code loadkit/hook.go}) as a CEL expression, for parents that relate to nothing:
 * {@code spec.children} ConfigMaps {@code <parent>-<i>} labelled {@code bench.metareactor.dev/load: "true"} holding
 * {@code value}, {@code index} and the same 256-byte {@code payload}, and the status {@code {value, stamp}}; a spec
 * field that is not there reads as Go reads it (an empty string, no children). A run with {@code --shadow} has the Go
 * hook compare every answer ({@code shadowDiffers} in the results), which is how {@code LoadHarnessIT} holds the two
 * to the same answer.
 */
final class CelSync {

  /** hook.go's {@code payload}: {@code a} to {@code z} over and over, 256 bytes. */
  static final String PAYLOAD = IntStream.range(0, 256).mapToObj(i -> String.valueOf((char) ('a' + i % 26)))
      .collect(Collectors.joining());

  private CelSync() {}

  /**
   * The expression, for parents that want at most {@code children} ConfigMaps (CEL has no range function: the
   * indices are a literal list, cut to each parent's {@code spec.children}).
   */
  static String expression(int children) {
    String indices = IntStream.range(0, children).mapToObj(Integer::toString).collect(Collectors.joining(", "));
    return """
        cel.bind(value, parent.spec.?value.orValue(''),
          {'status': {'value': value, 'stamp': parent.spec.?stamp.orValue('')},
           'children': [%s].filter(i, i < parent.spec.?children.orValue(0)).map(i,
             {'apiVersion': 'v1', 'kind': 'ConfigMap',
              'metadata': {'name': parent.metadata.name + '-' + string(i),
                           'labels': {'bench.metareactor.dev/load': 'true'}},
              'data': {'value': value, 'index': string(i), 'payload': '%s'}})})
        """.formatted(indices, PAYLOAD);
  }
}
