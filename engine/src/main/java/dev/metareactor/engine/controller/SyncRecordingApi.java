package dev.metareactor.engine.controller;

import dev.metareactor.engine.kube.ApiException;
import dev.metareactor.engine.kube.ApiResource;
import dev.metareactor.engine.kube.AroundWritesApi;
import dev.metareactor.engine.kube.ObjectApi;
import reactor.core.publisher.Mono;

/**
 * The engine's {@link ObjectApi} with {@code --record-syncs}: every write made inside a recorded sync is added to its
 * {@link SyncRecord} (verb, object, result) as it completes; reads, and writes outside a recorded sync, pass through
 * untouched.
 */
public final class SyncRecordingApi extends AroundWritesApi {

  public SyncRecordingApi(ObjectApi api) {
    super(api);
  }

  @Override
  protected <T> Mono<T> around(String verb, ApiResource resource, String namespace, String name, Mono<T> write) {
    return Mono.deferContextual(context -> {
      SyncRecord record = SyncRecord.of(context);
      if (record == null) {
        return write;
      }
      return write
          .doOnSuccess(done -> record.write(new SyncRecord.Write(verb, resource, namespace, name, "2xx")))
          .doOnError(error -> record.write(new SyncRecord.Write(verb, resource, namespace, name,
              ApiException.codeOf(error) > 0 ? Integer.toString(ApiException.codeOf(error)) : "error")));
    });
  }
}
