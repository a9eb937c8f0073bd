/**
 * DecoratorController: targets of one or more resources selected by labels and annotations, and the attachments
 * its sync hook asks for (owned, annotated, never adopted); the router (events to target keys), the decorator part of
 * the sync (attachments, labels, annotations, status) and the hosted controller.
 */
@NullMarked
package dev.metareactor.engine.controller.decorator;

import org.jspecify.annotations.NullMarked;
