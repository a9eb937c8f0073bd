package dev.metareactor.http;

import static dev.metareactor.http.Fixtures.FAST_RETRIES;
import static dev.metareactor.http.Fixtures.ROOT;
import static dev.metareactor.http.Fixtures.fail;
import static dev.metareactor.http.Fixtures.options;
import static dev.metareactor.http.Fixtures.request;
import static dev.metareactor.http.Fixtures.succeed;
import static dev.metareactor.http.ScriptedServer.chunked;
import static dev.metareactor.http.ScriptedServer.ok;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.metareactor.http.HookCallException.Reason;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Sinks;
import tools.jackson.databind.JsonNode;

/**
 * Answers bounded in memory, not only in bytes: the parse limits ({@link AnswerLimits}), the budget of answers in
 * flight ({@link AnswerMemory}, held by {@link AnswerScope}) and the ETag cache weighing the trees it holds.
 */
class AnswerMemoryTest extends ScriptedHookTest {

  /** A 64 KiB cap: at most 8,192 tokens per answer, 1 MiB for all answers in flight beyond 256 KiB each. */
  private static final long SMALL_CAP = 64 << 10;

  private void useCap(long maxResponseBytes) {
    useOptions(options(HookClientOptions.Pool.DEFAULTS, FAST_RETRIES, maxResponseBytes, Duration.ZERO));
  }

  /** {@code [{},{},...]}: two tokens and about 94 bytes of tree per three bytes. */
  private static String emptyObjects(int count) {
    return "[" + "{},".repeat(count - 1) + "{}]";
  }

  private HookCallException failsWith(String answer) {
    Hook hook = hook(spec -> spec, ok(answer));
    HookCallException failure = fail(hook.call(request(), ROOT));
    assertThat(failure.reason()).isEqualTo(Reason.INVALID_RESPONSE);
    assertThat(failure.attempts()).as("an answer over a limit is not asked for again").isEqualTo(1);
    return failure;
  }

  @Test
  void anAnswerNestedDeeperThan200LevelsIsRefusedNamingTheLimit() {
    assertThat(failsWith("[".repeat(201) + "]".repeat(201)).detail())
        .startsWith("response exceeds a limit of the JSON parser: ").contains("nesting depth (201)", "(200");
  }

  @Test
  void anAnswerOfMoreTokensThanOnePer8BytesOfTheCapIsRefusedNamingTheLimit() {
    useCap(SMALL_CAP);
    // 40 KB, within the cap: 20,000 tokens where 8,192 are allowed.
    assertThat(failsWith(emptyObjects(10_000)).detail())
        .startsWith("response exceeds a limit of the JSON parser: Token count").contains("8192");
  }

  @Test
  void stringsNumbersAndNamesHaveTheirLimits() {
    assertThat(failsWith("{\"a\":\"" + "x".repeat((3 << 20) + 1) + "\"}").detail()).contains("String value length");
    assertThat(failsWith("{\"a\":" + "9".repeat(401) + "}").detail()).contains("Number value length");
    assertThat(failsWith("{\"" + "k".repeat(4097) + "\":1}").detail()).contains("Name length");
  }

  @Test
  void realAnswersWithinTheLimitsPass() {
    // 3 MiB strings, 400-digit numbers, 200 levels, as many tokens as allowed.
    String deep = "[".repeat(199) + "{\"s\":\"" + "x".repeat(3 << 20) + "\",\"n\":" + "9".repeat(400) + "}"
        + "]".repeat(199);
    Hook hook = hook(spec -> spec, ok(deep));

    assertThat(succeed(hook.call(request(), ROOT)).body().isArray()).isTrue();
  }

  @Test
  void answersHeldByTheirWorkShareTheBudgetAndTheOnesThatDoNotFitFailAtOnce() {
    useCap(SMALL_CAP);
    // 4,000 empty objects: 12 KB on the wire, about 376 KB of tree, of which about 130 KB count against 1 MiB.
    Hook hook = hook(spec -> spec, chunked(emptyObjects(4_000), 1000));
    Sinks.Empty<Void> done = Sinks.empty();
    AtomicInteger answered = new AtomicInteger();
    List<CompletableFuture<JsonNode>> held = new ArrayList<>();
    List<Throwable> refused = new ArrayList<>();
    for (int i = 0; i < 12; i++) {
      int before = answered.get();
      CompletableFuture<JsonNode> work = AnswerScope.around(hook.call(request(), ROOT).map(HookResponse::body)
          .doOnNext(body -> answered.incrementAndGet())
          .flatMap(body -> done.asMono().thenReturn(body))).toFuture();
      await().atMost(Duration.ofSeconds(10)).until(() -> work.isDone() || answered.get() > before);
      if (work.isDone()) {
        refused.add(work.handle((body, error) -> error).join());
      } else {
        held.add(work);
      }
      assertThat(client.answerMemory().used()).isLessThanOrEqualTo(client.answerMemory().limit());
    }

    assertThat(refused).as("answers beyond the budget").isNotEmpty().allSatisfy(error ->
        assertThat(error).isInstanceOfSatisfying(HookCallException.class, failure -> {
          assertThat(failure.reason()).isEqualTo(Reason.OVERLOADED);
          assertThat(failure.detail()).startsWith("response exceeds the memory budget of hook answers (1048576 bytes");
        }));
    assertThat(held).as("answers within the budget").hasSizeGreaterThanOrEqualTo(4);
    assertThat(client.answerMemory().held()).as("their trees, free parts included")
        .isGreaterThan(held.size() * 300_000L);
    done.tryEmitEmpty();
    held.forEach(CompletableFuture::join);
    assertThat(client.answerMemory().used()).as("all given back when their work ended").isZero();
    assertThat(succeed(hook.call(request(), ROOT)).body().size()).isEqualTo(4_000);
    // A call without a scope gives back when it ends, just after its answer went out.
    await().atMost(Duration.ofSeconds(10)).until(() -> client.answerMemory().used() == 0
        && client.answerMemory().held() == 0);
  }

  @Test
  void theBudgetCountsBeyondAFreePartPerAnswer() {
    AnswerMemory memory = new AnswerMemory(200_000);
    AnswerMemory.Charge small = memory.open();
    small.add(AnswerMemory.FREE_PER_ANSWER);
    assertThat(memory.used()).as("within the free part").isZero();

    AnswerMemory.Charge large = memory.open();
    large.add(AnswerMemory.FREE_PER_ANSWER + 150_000);
    assertThat(memory.used()).isEqualTo(150_000);
    AnswerMemory.Charge refused = memory.open();
    assertThatThrownBy(() -> refused.add(AnswerMemory.FREE_PER_ANSWER + 60_000))
        .isInstanceOfSatisfying(HookCallException.class,
            failure -> assertThat(failure.reason()).isEqualTo(Reason.OVERLOADED));
    assertThat(memory.used()).as("a refused answer takes nothing of the budget").isEqualTo(150_000);
    refused.close();

    large.remove(100_000);
    assertThat(memory.used()).as("what it lets go of goes back").isEqualTo(50_000);
    large.close();
    large.close();
    small.close();
    assertThat(memory.used()).isZero();
    assertThatThrownBy(() -> large.add(1 << 20)).as("the work of a closed answer stops")
        .isInstanceOf(AnswerMemory.Abandoned.class);
    assertThat(memory.used()).as("a closed answer takes nothing more").isZero();
    assertThat(memory.held()).isZero();
  }

  @Test
  void aParseWhoseCallHasEndedStopsAtItsNextCharge() {
    // A call that timed out while its answer was parsed on another thread: the parse must not go on off the books.
    AnswerMemory.Charge charge = new AnswerMemory(1 << 30).open();
    charge.close();
    WeighedParser parser = new WeighedParser(Fixtures.JSON.createParser(emptyObjects(100_000)), charge);

    assertThatThrownBy(() -> Fixtures.JSON.readTree(parser)).isInstanceOf(AnswerMemory.Abandoned.class);
    assertThat(parser.weight()).as("stopped after 16 KiB of tree, not 9 MB").isLessThan(32 << 10);
  }

  @Test
  void theEtagCacheWeighsTheTreesItHolds() {
    // 1 MiB of cache. An answer of 150 KB holds a tree of about 4.7 MB: weighed by its bytes it would be kept.
    useOptions(Fixtures.FAST.withEtagCacheMaxBytes(1 << 20));
    Hook hook = hook(spec -> spec.withEtag(new EtagSettings(true, null, null)),
        ok(emptyObjects(50_000), "ETag", "\"big\""), ok("{\"small\":true}", "ETag", "\"small\""));

    succeed(hook.call(request(), ROOT));
    assertThat(client.cachedAnswers()).as("too heavy for the cache").isZero();
    succeed(hook.call(request(), new CacheKey("Widget", "default", "w2")));
    assertThat(client.cachedAnswers()).isEqualTo(1);
  }

  @Test
  void theWeightIsTheSameHoweverTheTreeIsRead() {
    String answer = "{\"children\":[{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"a\","
        + "\"labels\":{\"x\":\"\\u00e9t\\u00e9\"}},\"data\":{\"k\":\"v\",\"n\":\"12\"}},[1,-1,12,1e3,2147483648,"
        + "true,null,\"\\u4e2d\"]],\"status\":{\"ok\":true}}";
    long byTree = weigh(answer, true);
    long byTokens = weigh(answer, false);

    assertThat(byTree).isEqualTo(byTokens).isPositive();
  }

  private static long weigh(String answer, boolean asTree) {
    AnswerMemory.Charge charge = new AnswerMemory(1 << 30).open();
    try (WeighedParser parser = new WeighedParser(Fixtures.JSON.createParser(answer), charge)) {
      if (asTree) {
        Fixtures.JSON.readTree(parser);
      } else {
        while (parser.nextToken() != null) {
          // every token, read one at a time
        }
      }
      parser.chargeRest();
      assertThat(charge.weight()).isEqualTo(parser.weight());
      return parser.weight();
    }
  }
}
