/**
 * MapController: for every input a parent selects, the outputs a map hook asks for; for the outputs of an input that
 * went away, what a tombstone hook keeps. The unit of work is one input of one parent ({@link
 * dev.metareactor.engine.controller.map.MapKey}); {@link dev.metareactor.engine.controller.map.MapRouter} routes
 * events by index, {@link dev.metareactor.engine.controller.map.MapSync} is the kind's part of each sync, {@link
 * dev.metareactor.engine.controller.map.MapStatus} counts and writes the parent's status once per burst. Threads as in
 * {@code controller/}: routers on informer threads, syncs on the work queue's workers, status counts on the work
 * scheduler.
 */
@NullMarked
package dev.metareactor.engine.controller.map;

import org.jspecify.annotations.NullMarked;
