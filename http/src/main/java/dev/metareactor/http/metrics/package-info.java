/**
 * The metrics the engine exports, declared in one place: {@link dev.metareactor.http.metrics.MetricCatalogue} lists
 * them (name, type, labels, help), and every meter Metareactor registers, in the engine and in the hook client alike,
 * is built from its {@link dev.metareactor.http.metrics.Metric}. It lives in this module, below the engine, because the
 * hook client registers meters too. {@code docs/metrics.md} is the page users read; tests hold the two together.
 *
 * <p>Parameters and return values are non-null unless annotated {@code @Nullable}.
 */
@NullMarked
package dev.metareactor.http.metrics;

import org.jspecify.annotations.NullMarked;
