/**
 * The customize hook and related objects: the rules a customize hook answers, where each reads (per hook version
 * and scope, as upstream), the objects they select from the informer caches, and the reverse index that routes a
 * related object's event to exactly the parents that read it. Lookups run on informer threads; filing runs in syncs.
 */
@NullMarked
package dev.metareactor.engine.controller.related;

import org.jspecify.annotations.NullMarked;
