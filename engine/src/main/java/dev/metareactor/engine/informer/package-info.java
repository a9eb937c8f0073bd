/**
 * Informers: list (from the watch cache) and watch with bookmarks, relist after 410, periodic resync; shared and
 * reference-counted per resource, with label, owner and namespace indexes. Each informer delivers its events in order
 * on its own serial worker (on Reactor's parallel scheduler); callbacks must only read caches and enqueue.
 */
@NullMarked
package dev.metareactor.engine.informer;

import org.jspecify.annotations.NullMarked;
