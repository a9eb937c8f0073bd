package dev.metareactor.engine.cel;

import dev.cel.common.ast.CelExpr;
import dev.cel.runtime.CelEvaluationListener;
import java.util.Collection;
import java.util.Map;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;

/**
 * The cost tracker of one evaluation: cel-java has no runtime cost limit of its own (cel-go's), so this counts what
 * the interpreter reports after each sub-expression it evaluated, and stops the evaluation (by throwing out of the
 * interpreter) once the cost or the time is spent. Each report costs one unit, plus one per element of a list or
 * map and one per 64 characters of a string the sub-expression yielded: what an expression builds, it pays for, so
 * a comprehension that copies a growing list pays the square it costs. Single built-in calls are bounded by their
 * inputs (the lists extension's {@code lists.range} is left out for that reason), so the next report comes soon.
 */
final class CelBudget implements CelEvaluationListener {

  /** Thrown out of the interpreter to stop it; the evaluation turns it into a {@link CelHookException}. */
  static final class Exceeded extends RuntimeException {
    private static final long serialVersionUID = 1L;

    Exceeded(String message) {
      super(message, null, false, false);
    }
  }

  private final CelLimits limits;
  private final LongSupplier nanoTime;
  private final long deadline;
  private long spent;

  CelBudget(CelLimits limits, LongSupplier nanoTime) {
    this.limits = limits;
    this.nanoTime = nanoTime;
    this.deadline = nanoTime.getAsLong() + limits.timeout().toNanos();
  }

  @Override
  public void callback(CelExpr expr, @Nullable Object result) {
    spent += 1 + size(result);
    if (spent > limits.costLimit()) {
      throw new Exceeded("over its cost limit of " + limits.costLimit());
    }
    if (nanoTime.getAsLong() - deadline > 0) {
      throw new Exceeded("over its timeout of " + limits.timeout().toMillis() + " ms");
    }
  }

  /** The cost units spent so far. */
  long spent() {
    return spent;
  }

  private static long size(@Nullable Object value) {
    if (value instanceof String text) {
      return text.length() / 64;
    }
    // Most results are scalars: their final classes are told apart at once, where a failing check for an interface
    // scans the class's interfaces (on a result per sub-expression, that showed in the profile).
    if (value == null || value instanceof Long || value instanceof Boolean || value instanceof Double) {
      return 0;
    }
    if (value instanceof Collection<?> list) {
      return list.size();
    }
    if (value instanceof Map<?, ?> map) {
      return map.size();
    }
    return 0;
  }
}
