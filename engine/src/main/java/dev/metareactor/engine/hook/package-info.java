/**
 * Calling hooks: the hook caller over the http module's client (ETag cache, retries, circuit breaker), the answers'
 * parsing and checks, object-map keys per hook version, and TLS material and credentials read from Secrets and
 * ConfigMaps and followed while the controller runs. Non-blocking throughout.
 */
@NullMarked
package dev.metareactor.engine.hook;

import org.jspecify.annotations.NullMarked;
