/**
 * Calling hooks: the hook caller over the http module's client (ETag cache, retries, circuit breaker), the answers'
 * parsing and checks (each field declared once, {@link dev.metareactor.engine.hook.AnswerFields}), object-map keys
 * per hook version, and TLS material and credentials read from Secrets and ConfigMaps and followed while the
 * controller runs. Non-blocking throughout.
 */
@NullMarked
package dev.metareactor.engine.hook;

import org.jspecify.annotations.NullMarked;
