import { AggregatorRegistry, type MetricObjectWithValues, type MetricValue } from 'prom-client';
import { supervisorMetrics } from './metrics.js';
import type { Logger } from '../../logging/logger.js';
import { createMetricsRegistry } from '../../metrics/registry.js';
import { createHttpServer, opsRoutes, type MetricsSource } from '../../http/ops-server.js';
import { TrapStore } from '../watchdog/traps.js';
import { WorkerPool, type WorkerExit } from './worker-pool.js';
import { WorkersReadiness } from './workers-readiness.js';
import { FINAL_EXIT_CODES } from '../exit-codes.js';

/** How long a scrape or a readiness probe waits for a worker's answer. */
const ANSWER_TIMEOUT_MS = 2_000;
/** A worker bounds its own shutdown by SHUTDOWN_TIMEOUT_MS; the pool allows it this much more. */
const STOP_MARGIN_MS = 2_000;

export interface SupervisorOptions {
  service: string;
  workers: number;
  logger: Logger;
  httpHost: string;
  httpPort: number;
  shutdownTimeoutMs: number;
  /** The workers' watchdog state (service/watchdog): a worker it killed left a note there. */
  stateDir?: string;
  /** Node flags of the workers (see RunServiceOptions.workerNodeFlags). */
  workerNodeFlags?: readonly string[];
}

/** How the workers ended; `final` carries the code a worker exited with that made the supervisor stop them all. */
export type SupervisorOutcome = 'ok' | 'failed' | 'timeout' | { final: number };

/**
 * The primary process of a service run as several workers: it starts them, replaces
 * one that dies (one that exits with 77 or 78 stops them all instead: the supervisor then
 * exits with that code), and serves /livez, /readyz and /metrics for all of them (readiness
 * per worker; metrics summed over the workers, as prom-client's cluster mode does).
 * Resolves when a signal has stopped every worker.
 */
export async function runSupervisor(options: SupervisorOptions, stopSignal: Promise<string>): Promise<SupervisorOutcome> {
  const { logger } = options;
  const own = createMetricsRegistry(options.service, { defaultMetrics: false });
  // pool.running() is read only when scraped, once the pool below exists.
  const { replaced, stalls, unanswered: missing } = supervisorMetrics(own, () => pool.running());
  const notes = options.stateDir === undefined ? undefined : new TrapStore(options.stateDir);
  const onReplace = (exit: WorkerExit) => {
    replaced.inc();
    const note = exit.pid === undefined ? undefined : notes?.takeNote(exit.pid);
    if (!note) return;
    stalls.inc({ kind: note.kind });
    const { trap } = note;
    if (trap)
      logger.error(
        { worker: exit.worker, pid: exit.pid, topic: trap.topic, partition: trap.partition, offset: trap.offset, heldMs: trap.heldMs, budgetMs: trap.budgetMs },
        'worker stalled on a record: its watchdog killed it; the record is quarantined (dead-lettered, not handled, by whoever meets it next)',
      );
    else logger.error({ worker: exit.worker, pid: exit.pid, silentMs: note.silentMs }, 'worker stalled outside any record: its watchdog killed it');
  };
  let onFinal: (exit: WorkerExit) => void = () => undefined;
  const finalExit = new Promise<WorkerExit>((resolve) => (onFinal = resolve));
  const pool = new WorkerPool({ count: options.workers, logger, onReplace, finalCodes: FINAL_EXIT_CODES, onFinal: (exit) => onFinal(exit), nodeFlags: options.workerNodeFlags ?? [] });

  const metrics: MetricsSource = {
    contentType: own.contentType,
    async metrics() {
      // One worker: its text as it is (the supervisor's own metrics have names of their
      // own), without the JSON round trip and the merge that summing several needs.
      if (options.workers === 1) {
        const [answer] = await pool.askAll('metrics-text', ANSWER_TIMEOUT_MS);
        const text = typeof answer?.metricsText === 'string' ? answer.metricsText : undefined;
        missing.set(text === undefined ? 1 : 0);
        return (text ?? '') + (await own.metrics());
      }
      const answers = await pool.askAll('metrics', ANSWER_TIMEOUT_MS);
      const parts = answers.flatMap((a) => (a?.metrics ? [a.metrics as MetricObjectWithValues<MetricValue<string>>[]] : []));
      missing.set(options.workers - parts.length);
      return (await AggregatorRegistry.aggregate(parts).metrics()) + (await own.metrics());
    },
  };
  const readiness = new WorkersReadiness(() => pool.askAll('readiness', ANSWER_TIMEOUT_MS));

  const http = createHttpServer(logger);
  await http.register(opsRoutes, { registry: metrics, readiness });
  const address = await http.listen({ host: options.httpHost, port: options.httpPort });
  logger.info({ address, workers: options.workers }, 'http listening; starting workers');
  pool.start();

  const ending = await Promise.race([stopSignal.then((signal) => ({ signal })), finalExit.then((exit) => ({ exit }))]);
  if ('signal' in ending) logger.info({ signal: ending.signal }, 'shutting down: stopping workers');
  else logger.fatal({ worker: ending.exit.worker, code: ending.exit.code }, `a worker exited with ${ending.exit.code}: stopping the other workers and the service (its log says why)`);
  readiness.markDraining();
  const report = await pool.stop(options.shutdownTimeoutMs + STOP_MARGIN_MS);
  await http.close().catch((error: unknown) => logger.error({ err: error }, 'http close failed'));
  logger.info({ clean: report.clean, killed: report.killed }, 'stopped');
  if ('exit' in ending) return { final: ending.exit.code ?? 1 };
  return report.killed > 0 ? 'timeout' : report.clean ? 'ok' : 'failed';
}
