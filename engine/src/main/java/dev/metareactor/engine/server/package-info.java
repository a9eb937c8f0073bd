/**
 * The engine's assembly and process-level concerns: {@link dev.metareactor.engine.server.Engine} (the client,
 * discovery, informers, hosts, readiness, graceful shutdown), leader election, logging as Metacontroller's zap logs,
 * and the JVM's profiles on request where Metacontroller serves Go's pprof
 * ({@link dev.metareactor.engine.server.ProfilingServer}, {@code --pprof-address}).
 *
 * <h2>Thread map</h2>
 *
 * <p>{@code Engine} picks the schedulers and clocks once ({@link
 * dev.metareactor.engine.config.Scheduling#production()})
 * and hands them down through the controller context; nothing below it picks its own, so a test can run a controller
 * in virtual time. In production:
 *
 * <ul>
 *   <li>{@code reactor-http-epoll-*}: Reactor Netty event loops — API and hook I/O, watch decoding. Never block.</li>
 *   <li>{@code parallel-*}: Reactor's parallel scheduler — syncs (the queue's workers), timers, discovery and each
 *       informer's serial worker (its events, in order, to the routers).</li>
 *   <li>{@code leases}: the leader lease's and the shard lease's renewals, on a thread of their own: on a parallel
 *       worker a renewal would wait behind an informer parsing a list of thousands, and a busy replica would miss its
 *       renew deadline (and, with the write fence, refuse its own writes meanwhile).</li>
 *   <li>{@code boundedElastic-*}: building, starting and stopping controllers (which may read Secrets, build TLS),
 *       refreshing credentials.</li>
 *   <li>{@code main}: parsing, start, then waiting for a signal; shutdown.</li>
 *   <li>No other pool: the caches' maintenance runs on the thread that uses them ({@link
 *       dev.metareactor.engine.config.Caches}), not on the common {@code ForkJoinPool}.</li>
 * </ul>
 */
@NullMarked
package dev.metareactor.engine.server;

import org.jspecify.annotations.NullMarked;
