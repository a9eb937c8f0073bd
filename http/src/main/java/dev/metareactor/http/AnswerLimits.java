package dev.metareactor.http;

import tools.jackson.core.StreamReadConstraints;

/**
 * The limits hook answers are parsed under (Jackson's stream read constraints), so that an answer below the size
 * cap cannot be built to blow up when parsed. Bytes alone do not bound memory: 8 MiB of {@code [{},{},...]} makes
 * 2.7 million object nodes, about 225 MB of heap, and 8 MiB of Deployments about 77 MB (see
 * {@code benchmarks/README.md}, "HookAnswerMemory"). An answer over a limit fails its call with
 * {@link HookCallException.Reason#INVALID_RESPONSE} naming the limit.
 *
 * <ul>
 *   <li><b>Tokens</b>: one per {@value #BYTES_PER_TOKEN} bytes of {@link HookClientOptions#maxResponseBytes()}
 *       (1,048,576 for 8 MiB): what bounds the tree. Kubernetes objects take 6 (Deployments) to 19 (ConfigMaps with
 *       data) bytes per token, so an answer of real objects reaches the byte cap first or nearly; at the limit the
 *       tree of the worst shape measured (a million one-character strings) keeps 72 MB.</li>
 *   <li><b>Nesting depth</b>: {@value #MAX_NESTING_DEPTH}. The deepest Kubernetes objects (CRDs' OpenAPI schemas)
 *       nest well under 100 levels; deeper answers are only good for overflowing the stack of recursive code.</li>
 *   <li><b>String length</b>: {@value #MAX_STRING_LENGTH} characters (3 MiB): the API server refuses any request
 *       body above 3 MiB, so no longer string could ever be written.</li>
 *   <li><b>Number length</b>: {@value #MAX_NUMBER_LENGTH} characters: every float64 fits written out in full (at
 *       most 309 digits before the point, 343 characters for the smallest subnormal); longer numbers only cost
 *       CPU to convert.</li>
 *   <li><b>Name length</b>: {@value #MAX_NAME_LENGTH} characters: Kubernetes keys are far shorter (label and
 *       annotation keys at most 317, ConfigMap keys 253).</li>
 *   <li><b>Document length</b>: {@link HookClientOptions#maxResponseBytes()}, as the body's reading already
 *       enforces.</li>
 * </ul>
 */
final class AnswerLimits {

  static final int BYTES_PER_TOKEN = 8;
  static final int MAX_NESTING_DEPTH = 200;
  static final int MAX_STRING_LENGTH = 3 << 20;
  static final int MAX_NUMBER_LENGTH = 400;
  static final int MAX_NAME_LENGTH = 4096;
  /** Even a tiny size cap leaves room for a small answer's tokens. */
  private static final long MIN_TOKENS = 1024;

  private AnswerLimits() {}

  /** The most tokens an answer may have under this size cap. */
  static long maxTokens(long maxResponseBytes) {
    return Math.max(MIN_TOKENS, maxResponseBytes / BYTES_PER_TOKEN);
  }

  /** The constraints for answers of at most {@code maxResponseBytes}. */
  static StreamReadConstraints constraints(long maxResponseBytes) {
    return StreamReadConstraints.builder()
        .maxTokenCount(maxTokens(maxResponseBytes))
        .maxNestingDepth(MAX_NESTING_DEPTH)
        .maxStringLength(MAX_STRING_LENGTH)
        .maxNumberLength(MAX_NUMBER_LENGTH)
        .maxNameLength(MAX_NAME_LENGTH)
        .maxDocumentLength(maxResponseBytes)
        .build();
  }
}
