package dev.metareactor.apply.cli;

import dev.metareactor.apply.ApplyException;
import dev.metareactor.apply.ApplyResult;
import dev.metareactor.apply.DynamicApply;
import dev.metareactor.apply.GoJson;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.SerializationFeature;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.JsonNodeFactory;
import tools.jackson.databind.node.ObjectNode;
import tools.jackson.databind.util.RawValue;

/**
 * Previews what the engine would write to a child:
 * {@code java -jar metareactor-apply.jar --observed OBSERVED.json --desired DESIRED.json}.
 *
 * <p>Prints {@code {"changed": <bool>, "object": <object>}} and exits 0. Without {@code --observed} it previews a
 * create. Bad arguments, unreadable files, invalid JSON or inputs that cannot be applied print one line on
 * stderr and exit 2.
 */
public final class ApplyCommand {

  static final int OK = 0;
  static final int USAGE = 2;

  private static final String HELP = String.join(System.lineSeparator(),
      "Usage: metareactor-apply [--observed OBSERVED.json] --desired DESIRED.json [--compact]",
      "",
      "Prints what Metareactor's dynamic apply would write for a child object:",
      "  {\"changed\": <bool>, \"object\": <the object the engine would write>}",
      "",
      "  --observed FILE  the live object as read from the cluster, with its",
      "                   metacontroller.k8s.io/last-applied-configuration annotation;",
      "                   omit it to preview a create",
      "  --desired FILE   the object the hook returned",
      "  --compact        print on one line",
      "  -h, --help       show this help",
      "",
      "Exit codes: 0 success, 2 bad arguments or input.");

  private final JsonMapper mapper = JsonMapper.builder().build();
  private final PrintStream out;
  private final PrintStream err;

  ApplyCommand(PrintStream out, PrintStream err) {
    this.out = out;
    this.err = err;
  }

  public static void main(String[] args) {
    int code = new ApplyCommand(System.out, System.err).run(args);
    System.out.flush();
    System.exit(code);
  }

  int run(String[] args) {
    Path observedFile = null;
    Path desiredFile = null;
    boolean compact = false;
    for (int i = 0; i < args.length; i++) {
      String arg = args[i];
      String value = null;
      int eq = arg.indexOf('=');
      if (arg.startsWith("--") && eq > 0) {
        value = arg.substring(eq + 1);
        arg = arg.substring(0, eq);
      }
      switch (arg) {
        case "-h", "--help" -> {
          out.println(HELP);
          return OK;
        }
        case "--compact" -> compact = true;
        case "--observed", "--desired" -> {
          if (value == null) {
            if (i + 1 >= args.length) {
              return fail("missing value for " + arg);
            }
            value = args[++i];
          }
          if (arg.equals("--observed")) {
            observedFile = Path.of(value);
          } else {
            desiredFile = Path.of(value);
          }
        }
        default -> {
          return fail("unknown argument: " + args[i] + " (see --help)");
        }
      }
    }
    if (desiredFile == null) {
      return fail("--desired is required (see --help)");
    }
    try {
      JsonNode observed = observedFile == null ? null : read(observedFile, "observed");
      JsonNode desired = read(desiredFile, "desired");
      ApplyResult result = DynamicApply.apply(observed, desired);
      ObjectNode report = mapper.createObjectNode();
      report.put("changed", result.changed());
      report.set("object", numbersAsWritten(result.object()));
      String text = compact
          ? mapper.writeValueAsString(report)
          : mapper.writer().with(SerializationFeature.INDENT_OUTPUT).writeValueAsString(report);
      out.println(text);
      return OK;
    } catch (InputException | ApplyException e) {
      return fail(e.getMessage());
    }
  }

  /**
   * A copy of {@code node} whose numbers print as the engine sends them, in Go's spelling ({@code 3} for a desired
   * {@code 3.0}, {@code 100000000000000000000} for {@code 1e20}); Jackson would print {@code 3.0} and {@code 1.0E20}.
   */
  private static JsonNode numbersAsWritten(JsonNode node) {
    if (node.isNumber()) {
      return JsonNodeFactory.instance.rawValueNode(new RawValue(GoJson.marshal(node)));
    }
    if (node.isObject()) {
      ObjectNode copy = JsonNodeFactory.instance.objectNode();
      for (Map.Entry<String, JsonNode> member : node.properties()) {
        copy.set(member.getKey(), numbersAsWritten(member.getValue()));
      }
      return copy;
    }
    if (node.isArray()) {
      ArrayNode copy = JsonNodeFactory.instance.arrayNode(node.size());
      for (JsonNode item : node) {
        copy.add(numbersAsWritten(item));
      }
      return copy;
    }
    return node;
  }

  private JsonNode read(Path file, String what) {
    String text;
    try {
      text = Files.readString(file, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new InputException("cannot read " + what + " file " + file + ": " + describe(e));
    }
    try {
      JsonNode node = mapper.readTree(text);
      if (node == null || node.isMissingNode()) {
        throw new InputException(what + " file " + file + " is empty");
      }
      return node;
    } catch (JacksonException e) {
      throw new InputException(what + " file " + file + " is not valid JSON: " + oneLine(e.getOriginalMessage()));
    }
  }

  private int fail(@Nullable String message) {
    err.println("metareactor-apply: " + oneLine(message));
    return USAGE;
  }

  private static String describe(IOException e) {
    String name = e.getClass().getSimpleName();
    return e.getMessage() == null ? name : name + " (" + e.getMessage() + ")";
  }

  private static String oneLine(@Nullable String message) {
    return message == null ? "" : message.replaceAll("\\s*\\R\\s*", " ").strip();
  }

  /** Bad input to the command, reported as one line. */
  private static final class InputException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    InputException(String message) {
      super(message);
    }
  }
}
