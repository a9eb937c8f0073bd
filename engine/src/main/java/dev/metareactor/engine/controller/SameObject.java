package dev.metareactor.engine.controller;

import dev.metareactor.engine.kube.ApiException;
import dev.metareactor.engine.kube.ApiResource;
import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.engine.kube.ObjectApi;
import java.util.Objects;
import reactor.core.publisher.Mono;

/**
 * Whether the object a sync was shown is still the one under its name: not gone, not replaced by a namesake. A write
 * guarded by the object's UID (a JSON Patch's {@code test} of {@code /metadata/uid}, or {@code metadata.uid} in a
 * merge patch, which the API server refuses as an immutable field) is refused with 422 both when the guard fails and
 * when the server refuses what it writes; this one read tells which. It is made only after such a refusal, so it costs
 * nothing in a steady state.
 */
public final class SameObject {

  private SameObject() {}

  /**
   * Completes with {@code true} when the object under {@code cached}'s name has its UID, {@code false} when there is
   * none or another one; fails when the read fails otherwise.
   */
  public static Mono<Boolean> stillThere(ObjectApi api, ApiResource resource, KubeObject cached) {
    return api.get(resource, cached.namespace(), cached.name())
        .map(current -> Objects.equals(current.uid(), cached.uid()))
        .onErrorResume(e -> ApiException.codeOf(e) == 404, e -> Mono.just(false));
  }
}
