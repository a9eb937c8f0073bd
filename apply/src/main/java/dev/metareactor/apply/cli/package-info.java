/**
 * {@code metareactor-apply}: the command that previews what the engine's dynamic apply would write for a child,
 * from JSON files; one line on stderr and exit code 2 for bad input.
 */
@NullMarked
package dev.metareactor.apply.cli;

import org.jspecify.annotations.NullMarked;
