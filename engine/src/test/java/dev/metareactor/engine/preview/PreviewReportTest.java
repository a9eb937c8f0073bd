package dev.metareactor.engine.preview;

import static org.assertj.core.api.Assertions.assertThat;

import dev.metareactor.engine.host.OneShot;
import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.engine.queue.Outcome;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

/** The summary a preview ends with: what it counts, per parent or, for a MapController, per input of a parent. */
class PreviewReportTest {

  /** A unit of a one-shot sync that is never run: the summary reads only its key. */
  private record Key(String namespace, String name, String about) implements OneShot.Unit {
    @Override
    public Optional<KubeObject> object() {
      return Optional.empty();
    }

    @Override
    public Mono<OneShot.Synced> sync(Duration patience) {
      return Mono.error(new AssertionError("not run"));
    }
  }

  private static Preview.ParentResult synced(Key key, @Nullable String failure) {
    return new Preview.ParentResult(key, null, failure == null ? Outcome.success() : Outcome.failed(), failure,
        List.of(), List.of());
  }

  @Test
  void aCompositeControllersSummaryCountsParents() {
    Preview.Result result = new Preview.Result("CompositeController", "sites", 2, List.of(
        synced(new Key("team", "a", ""), null), synced(new Key("team", "b", ""), "hook answered 500")));
    assertThat(PreviewReport.summaryLine(result))
        .isEqualTo("CompositeController sites: 0 of 2 parents would change; 1 failed");
  }

  @Test
  void aFailedSyncSaysItsErrorOnce() {
    String error = "sync hook: hook answered 500";
    Preview.ParentResult told = new Preview.ParentResult(new Key("team", "a", ""), null, Outcome.failed(), error,
        List.of(), List.of(new PreviewApi.RecordedEvent("team", "a", "Warning", "SyncError", error)));
    Preview.ParentResult untold = synced(new Key("team", "b", ""), error);
    String text = PreviewReport.text(new Preview.Result("CompositeController", "sites", 2, List.of(told, untold)),
        false);
    assertThat(text).contains("object team/a: sync failed\n  SyncError: " + error + "\n")
        .contains("object team/b: sync failed: " + error + "\n");
  }

  @Test
  void aMapControllersSummaryCountsInputsAndTheirParents() {
    Preview.Result result = new Preview.Result("MapController", "snapshots", 1, List.of(
        synced(new Key("team", "nightly", "input configmaps/team/x: "), null),
        synced(new Key("team", "nightly", "input configmaps/team/y: "), null)));
    assertThat(PreviewReport.summaryLine(result))
        .isEqualTo("MapController snapshots: 0 of 2 inputs of 1 parent would change");
  }
}
