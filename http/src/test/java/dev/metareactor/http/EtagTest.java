package dev.metareactor.http;

import static dev.metareactor.http.Fixtures.ROOT;
import static dev.metareactor.http.Fixtures.fail;
import static dev.metareactor.http.Fixtures.json;
import static dev.metareactor.http.Fixtures.request;
import static dev.metareactor.http.Fixtures.succeed;
import static dev.metareactor.http.ScriptedServer.ok;
import static dev.metareactor.http.ScriptedServer.status;
import static org.assertj.core.api.Assertions.assertThat;

import dev.metareactor.http.HookCallException.Reason;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class EtagTest extends ScriptedHookTest {

  private static final EtagSettings ETAGS = new EtagSettings(true, null, null);

  private Hook hook(EtagSettings etag, ScriptedServer.Reply... script) {
    return hook(spec -> spec.withEtag(etag), script);
  }

  private List<String> ifNoneMatchSent() {
    return server.requests().stream().map(seen -> String.valueOf(seen.headers().get("If-None-Match"))).toList();
  }

  private double lookups(String result) {
    return meters.get("metacontroller.sync.etag.cache.lookups").tag("result", result).counter().count();
  }

  @Test
  void notModifiedServesTheCachedBody() {
    Hook hook = hook(ETAGS, ok("{\"v\":1}", "ETag", "\"a\""), status(304, ""));

    HookResponse first = succeed(hook.call(request(), ROOT));
    HookResponse second = succeed(hook.call(request(), ROOT));

    assertThat(first.cached()).isFalse();
    assertThat(second.cached()).isTrue();
    assertThat(second.body()).isEqualTo(json("{\"v\":1}"));
    assertThat(ifNoneMatchSent()).containsExactly("null", "\"a\"");
    assertThat(lookups("hit")).isEqualTo(1.0);
    assertThat(lookups("miss")).isEqualTo(1.0);
  }

  @Test
  void preconditionFailedServesTheCachedBodyToo() {
    Hook hook = hook(ETAGS, ok("{\"v\":1}", "ETag", "W/\"a\""), status(412, "precondition failed"));

    succeed(hook.call(request(), ROOT));

    assertThat(succeed(hook.call(request(), ROOT)).body()).isEqualTo(json("{\"v\":1}"));
  }

  @Test
  void eachRootObjectHasItsOwnEntry() {
    Hook hook = hook(ETAGS, ok("{\"v\":1}", "ETag", "\"a\""), ok("{\"v\":2}", "ETag", "\"b\""), status(304, ""));

    succeed(hook.call(request(), ROOT));
    succeed(hook.call(request(), new CacheKey("Widget", "default", "w2")));
    HookResponse again = succeed(hook.call(request(), new CacheKey("Widget", "default", "w2")));

    assertThat(ifNoneMatchSent()).containsExactly("null", "null", "\"b\"");
    assertThat(again.body()).isEqualTo(json("{\"v\":2}"));
  }

  @Test
  void aChangedAnswerReplacesTheEntry() {
    Hook hook = hook(ETAGS, ok("{\"v\":1}", "ETag", "\"a\""), ok("{\"v\":2}", "ETag", "\"b\""), status(304, ""));

    succeed(hook.call(request(), ROOT));
    succeed(hook.call(request(), ROOT));
    HookResponse third = succeed(hook.call(request(), ROOT));

    assertThat(ifNoneMatchSent()).containsExactly("null", "\"a\"", "\"b\"");
    assertThat(third.body()).isEqualTo(json("{\"v\":2}"));
  }

  @Test
  void anAnswerWithoutETagDropsTheEntry() {
    Hook hook = hook(ETAGS, ok("{\"v\":1}", "ETag", "\"a\""), ok("{\"v\":2}"), ok("{\"v\":3}"));

    succeed(hook.call(request(), ROOT));
    succeed(hook.call(request(), ROOT));
    succeed(hook.call(request(), ROOT));

    assertThat(ifNoneMatchSent()).containsExactly("null", "\"a\"", "null");
  }

  @Test
  void entriesExpireAfterCacheTimeoutSeconds() {
    Hook hook = hook(new EtagSettings(true, 30, 5), ok("{\"v\":1}", "ETag", "\"a\""), status(304, ""),
        ok("{\"v\":1}", "ETag", "\"a\""));

    succeed(hook.call(request(), ROOT));
    clock.advance(Duration.ofSeconds(29));
    assertThat(succeed(hook.call(request(), ROOT)).cached()).isTrue();
    clock.advance(Duration.ofSeconds(2));
    HookResponse afterExpiry = succeed(hook.call(request(), ROOT));

    assertThat(ifNoneMatchSent()).containsExactly("null", "\"a\"", "null");
    assertThat(afterExpiry.cached()).isFalse();
  }

  @Test
  void withoutTimeoutEntriesDoNotExpire() {
    Hook hook = hook(ETAGS, ok("{\"v\":1}", "ETag", "\"a\""), status(304, ""));

    succeed(hook.call(request(), ROOT));
    clock.advance(Duration.ofDays(400));

    assertThat(succeed(hook.call(request(), ROOT)).cached()).isTrue();
  }

  @Test
  void notModifiedWithNothingCachedIsAnError() {
    Hook hook = hook(ETAGS, status(304, ""));

    HookCallException failure = fail(hook.call(request(), ROOT));

    assertThat(failure.reason()).isEqualTo(Reason.INVALID_RESPONSE);
    assertThat(failure.statusCode()).hasValue(304);
    assertThat(failure.attempts()).isEqualTo(1);
    assertThat(failure.detail())
        .isEqualTo("hook answered 304 but cannot find cached response for cache key: Widget default/w1");
  }

  @Test
  void forgetDropsTheEntry() {
    Hook hook = hook(ETAGS, ok("{\"v\":1}", "ETag", "\"a\""));

    succeed(hook.call(request(), ROOT));
    hook.forget(ROOT);
    succeed(hook.call(request(), ROOT));

    assertThat(ifNoneMatchSent()).containsExactly("null", "null");
  }

  @Test
  void withEtagsDisabledNothingIsCachedAnd304IsAnError() {
    Hook hook = hook(EtagSettings.DISABLED, ok("{\"v\":1}", "ETag", "\"a\""), status(304, ""));

    succeed(hook.call(request(), ROOT));
    HookCallException failure = fail(hook.call(request(), ROOT));

    assertThat(ifNoneMatchSent()).containsExactly("null", "null");
    assertThat(failure.reason()).isEqualTo(Reason.STATUS);
    assertThat(failure.detail()).startsWith("unsupported status code: 304");
  }
}
