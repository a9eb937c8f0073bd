/**
 * Everything Metareactor speaks over HTTP, without Kubernetes: the hook client ({@link dev.metareactor.http.HookClient}
 * with its ETag cache, retries, circuit breakers, TLS, auth, metrics, and answers bounded in memory: parse limits and a
 * budget of answers in flight), the management server
 * ({@link dev.metareactor.http.ManagementServer}: {@code /metrics}, {@code /healthz}, {@code /readyz}) and
 * {@link dev.metareactor.http.HookServer} for writing hooks in Java.
 *
 * <p>Parameters and return values are non-null unless annotated {@code @Nullable}.
 */
@NullMarked
package dev.metareactor.http;

import org.jspecify.annotations.NullMarked;
