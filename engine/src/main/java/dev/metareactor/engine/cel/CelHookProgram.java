package dev.metareactor.engine.cel;

import dev.cel.bundle.Cel;
import dev.cel.bundle.CelFactory;
import dev.cel.common.CelAbstractSyntaxTree;
import dev.cel.common.CelIssue;
import dev.cel.common.CelOptions;
import dev.cel.common.CelSourceLocation;
import dev.cel.common.CelValidationResult;
import dev.cel.common.types.CelKind;
import dev.cel.common.types.CelType;
import dev.cel.common.types.SimpleType;
import dev.cel.extensions.CelExtensions;
import dev.cel.extensions.CelListsExtensions;
import dev.cel.extensions.CelOptionalLibrary;
import dev.cel.parser.CelStandardMacro;
import dev.cel.runtime.CelEvaluationException;
import dev.cel.runtime.CelRuntime;
import dev.metareactor.engine.kube.KubeJson;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.stream.Collectors;
import tools.jackson.databind.JsonNode;

/**
 * A CEL hook's expression, compiled and type-checked once (when the controller object is applied), evaluated once per
 * hook call with the request's fields as its variables; its value is the answer, as a webhook would send it.
 *
 * <p>Thread-safe: a compiled program is immutable, each evaluation has its own variables and {@link CelBudget}.
 */
public final class CelHookProgram {

  /**
   * The variables an expression may read: the request's top-level fields (each hook's request has some of them;
   * one it does not have is {@code null}), and {@code request}, the whole request.
   */
  public static final List<String> VARIABLES = List.of("controller", "parent", "object", "children", "attachments",
      "outputs", "related", "finalizing", "input", "mapKey");

  /** The whole request, beside its fields. */
  public static final String REQUEST = "request";

  /** The most iterations one comprehension ({@code map}, {@code filter}, {@code all}...) may make. */
  static final int MAX_ITERATIONS = 100_000;

  private static final CelOptions OPTIONS = CelOptions.current()
      .comprehensionMaxIterations(MAX_ITERATIONS)
      .enableOptionalSyntax(true)
      .build();

  /** One environment for every hook: building it costs about half a second, compiling with it a millisecond. */
  private static final Cel CEL = environment();

  private final CelRuntime.Program program;
  private final CelLimits limits;

  private CelHookProgram(CelRuntime.Program program, CelLimits limits) {
    this.program = program;
    this.limits = limits;
  }

  private static Cel environment() {
    // lists.range is left out: one call would build a list as long as its argument asks, between two budget checks.
    EnumSet<CelListsExtensions.Function> lists = EnumSet.allOf(CelListsExtensions.Function.class);
    lists.remove(CelListsExtensions.Function.RANGE);
    var builder = CelFactory.standardCelBuilder()
        .setOptions(OPTIONS)
        .setStandardMacros(CelStandardMacro.STANDARD_MACROS)
        .addCompilerLibraries(CelExtensions.strings(), CelExtensions.encoders(OPTIONS), CelExtensions.bindings(),
            CelExtensions.math(OPTIONS), CelExtensions.lists(lists), CelExtensions.sets(OPTIONS),
            CelOptionalLibrary.INSTANCE)
        .addRuntimeLibraries(CelExtensions.strings(), CelExtensions.encoders(OPTIONS), CelExtensions.math(OPTIONS),
            CelExtensions.lists(lists), CelExtensions.sets(OPTIONS), CelOptionalLibrary.INSTANCE)
        .addFunctionDeclarations(CelHelpers.declarations())
        .addFunctionBindings(CelHelpers.bindings())
        .addVar(REQUEST, SimpleType.DYN);
    VARIABLES.forEach(name -> builder.addVar(name, SimpleType.DYN));
    return builder.build();
  }

  /**
   * Parses and type-checks {@code expression}.
   *
   * @throws CelHookException naming each problem and its position ({@code line:column}, both from 1), or saying that
   *     the expression does not make an object
   */
  public static CelHookProgram compile(String expression, CelLimits limits) {
    Objects.requireNonNull(limits, "limits");
    CelValidationResult result = CEL.compile(expression);
    if (result.hasError()) {
      throw new CelHookException(result.getErrors().stream().map(CelHookProgram::describe)
          .collect(Collectors.joining("; ")));
    }
    CelAbstractSyntaxTree ast;
    try {
      ast = result.getAst();
    } catch (dev.cel.common.CelValidationException e) {
      throw new CelHookException(String.valueOf(e.getMessage()), e);
    }
    CelType type = ast.getResultType();
    if (type.kind() != CelKind.MAP && type.kind() != CelKind.DYN) {
      throw new CelHookException("1:1: the expression makes a " + type.name()
          + "; a hook's answer is an object (a map such as {'children': [...]})");
    }
    try {
      return new CelHookProgram(CEL.createProgram(ast), limits);
    } catch (CelEvaluationException e) {
      throw new CelHookException(String.valueOf(e.getMessage()), e);
    }
  }

  private static String describe(CelIssue issue) {
    CelSourceLocation location = issue.getSourceLocation();
    return location.getLine() > 0
        ? location.getLine() + ":" + (location.getColumn() + 1) + ": " + issue.getMessage()
        : issue.getMessage();
  }

  /** What one evaluation may spend. */
  public CelLimits limits() {
    return limits;
  }

  /**
   * Evaluates the expression with {@code request}'s fields as variables.
   *
   * @return the answer: the object the expression made, as JSON
   * @throws CelHookException when the evaluation fails, goes over its limits, or makes something other than an
   *     object JSON can hold
   */
  public JsonNode evaluate(JsonNode request) {
    CelRequest variables = new CelRequest(request);
    CelBudget budget = new CelBudget(limits, System::nanoTime);
    Object answer;
    try {
      answer = program.trace(variables, budget);
    } catch (CelBudget.Exceeded e) {
      throw new CelHookException("the CEL hook went " + e.getMessage());
    } catch (CelEvaluationException e) {
      if (e.getCause() instanceof CelBudget.Exceeded exceeded) {
        throw new CelHookException("the CEL hook went " + exceeded.getMessage());
      }
      throw new CelHookException("the CEL hook failed: " + e.getMessage(), e);
    }
    if (!(answer instanceof Map<?, ?>)) {
      throw new CelHookException("the CEL hook made " + KubeJson.text(CelValues.toJson(answer, false))
          + "; a hook's answer is an object");
    }
    return CelValues.toJson(answer, false);
  }
}
