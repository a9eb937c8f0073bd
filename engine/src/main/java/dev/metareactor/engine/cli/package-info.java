/**
 * The command line: Metacontroller's flags under their names (one or two dashes), Metareactor's own, parsed and
 * validated into {@link dev.metareactor.engine.config.EngineOptions}; a bad value ends the process with exit code 2 and
 * one line naming the flag. Runs once, on {@code main}.
 */
@NullMarked
package dev.metareactor.engine.cli;

import org.jspecify.annotations.NullMarked;
