/**
 * TLS materials for hook calls: a CA bundle that replaces the system roots, a client certificate and key for mutual
 * TLS, read from PEM the way Kubernetes Secrets and ConfigMaps hold them.
 */
@NullMarked
package dev.metareactor.http.tls;

import org.jspecify.annotations.NullMarked;
