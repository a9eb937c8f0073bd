/**
 * Label selectors (Kubernetes' syntax and semantics, from a controller spec, a hook answer or the command line) and
 * the index that finds the selectors matching an object's labels without testing every one. Immutable selectors; the
 * index is thread-safe. Its buckets ({@link dev.metareactor.engine.selector.IndexBucket}, mostly of one entry) also
 * serve the informers' indexes.
 */
@NullMarked
package dev.metareactor.engine.selector;

import org.jspecify.annotations.NullMarked;
