/**
 * Hosting controller objects: a {@link dev.metareactor.engine.host.ControllerHost} per kind watches its controller
 * objects and starts, rebuilds (on a spec change) and stops (or retires, when the object is deleted) one
 * {@link dev.metareactor.engine.host.HostedController} per object; the
 * {@link dev.metareactor.engine.host.ControllerContext} is what every hosted controller shares.
 */
@NullMarked
package dev.metareactor.engine.host;

import org.jspecify.annotations.NullMarked;
