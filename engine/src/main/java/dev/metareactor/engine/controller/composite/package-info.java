/**
 * CompositeController: a parent resource and the children its sync hook asks for, claimed by label selector and
 * ControllerRef; the router (events to parent keys, orphans through a selector index), the composite part of the sync
 * (claimed children, status with {@code observedGeneration}) and the hosted controller.
 */
@NullMarked
package dev.metareactor.engine.controller.composite;

import org.jspecify.annotations.NullMarked;
