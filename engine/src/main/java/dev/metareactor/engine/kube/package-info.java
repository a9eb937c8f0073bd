/**
 * The Kubernetes client: kubeconfig and credentials, one Reactor Netty connection pool for requests and watches,
 * objects kept as compact JSON bytes with the metadata routing needs ({@link dev.metareactor.engine.kube.KubeObject}),
 * resources ({@link dev.metareactor.engine.kube.ApiResource}), the one rate-limited, metered write path
 * ({@link dev.metareactor.engine.kube.ApiWriter}, which percent-encodes every path segment and never puts a name that
 * is not one in a URL) and the API server's naming rules ({@link dev.metareactor.engine.kube.ObjectNames}).
 * Non-blocking; nothing runs on the event loops but I/O and parsing.
 */
@NullMarked
package dev.metareactor.engine.kube;

import org.jspecify.annotations.NullMarked;
