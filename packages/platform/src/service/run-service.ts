import cluster from 'node:cluster';
import type { TProperties, TObject, Static } from '@sinclair/typebox';
import { isBanstreamError } from '@banstream/core';
import { loadConfig, type EnvSource } from '../config/load.js';
import { createLogger, type Logger } from '../logging/logger.js';
import { createMetricsRegistry } from '../metrics/registry.js';
import { createHttpServer, opsRoutes } from '../http/ops-server.js';
import { Readiness } from '../lifecycle/readiness.js';
import { runShutdown } from '../lifecycle/shutdown.js';
import type { Service, ServiceDeps } from '../lifecycle/service.js';
import { env } from '../config/env.js';
import { runSupervisor } from './workers/run-supervisor.js';
import { answerSupervisor, waitAtBarrier } from './workers/supervisor-ipc.js';
import { WORKER_ENV } from './workers/worker-pool.js';
import { startWatchdog, type Watchdog, type WatchdogSettings } from './watchdog/watchdog.js';
import { TrapStore } from './watchdog/traps.js';
import { EXIT, failureExitCode } from './exit-codes.js';

export { EXIT, failureExitCode };

/** The variables every service reads; a service spreads these and adds its own. */
export const baseEnv = {
  SERVICE_NAME: env.SERVICE_NAME,
  LOG_LEVEL: env.LOG_LEVEL,
  HTTP_HOST: env.HTTP_HOST,
  SHUTDOWN_TIMEOUT_MS: env.SHUTDOWN_TIMEOUT_MS,
};

/** The variable a supervisor sets on its workers (read here, not by loadConfig). */
export const workerEnv = {
  BANSTREAM_WORKER: env.BANSTREAM_WORKER,
};

type BaseConfig = Static<TObject<typeof baseEnv>> & { HTTP_PORT: number };

/** What runService hands a service factory: the usual deps, and its watchdog when it asked for one. */
export type RunServiceDeps<C> = ServiceDeps<C> & { watchdog?: Watchdog };

/** Builds the service from its deps. */
export type ServiceFactory<P extends TProperties> = (deps: RunServiceDeps<Readonly<Static<TObject<P>>>>) => Service;

export interface RunServiceOptions<P extends TProperties> {
  name: string;
  env: P;
  /**
   * The service's factory, or (`load`) a function that imports it: only the processes
   * that run the service call it, so a supervisor never loads the service's modules
   * (Kafka clients, its engine) and stays small.
   */
  create?: ServiceFactory<P>;
  load?: () => Promise<ServiceFactory<P>>;
  source?: EnvSource;
  /**
   * How many worker processes to run (default 1: this process is the service). Above
   * 1, this process supervises that many copies of itself (node:cluster) and serves
   * the ops routes for them; the workers serve no HTTP, so a service run this way
   * must not add routes of its own.
   */
  workers?: (config: Readonly<Static<TObject<P>>>) => number;
  /**
   * A watchdog on the records the service handles (service/watchdog/): a process that
   * keeps one record in hand past the budget is killed by its watchdog thread and the
   * record quarantined. Such a service always runs under a supervisor, even with one
   * worker: the supervisor replaces what the watchdog kills, and, never blocked by a
   * record, keeps answering /livez, /readyz and /metrics.
   */
  watchdog?: (config: Readonly<Static<TObject<P>>>) => WatchdogSettings;
  /**
   * Node flags of the worker processes, when there is a supervisor, in place of its own
   * flags of the same names: tuning for the work (a large young generation, say) that
   * the supervisor, which only relays, would pay for in memory.
   */
  workerNodeFlags?: readonly string[];
}

/**
 * The whole life of a service process: validate configuration (exit 78 naming the
 * bad variables), serve /livez, /readyz and /metrics, start the service, and on
 * SIGTERM or SIGINT report not-ready, stop within SHUTDOWN_TIMEOUT_MS and exit.
 * A second signal exits at once.
 */
export async function runService<P extends TProperties>(options: RunServiceOptions<P>): Promise<void> {
  let config: Readonly<Static<TObject<P>>>;
  try {
    config = loadConfig(options.env, options.source ?? process.env);
  } catch (error) {
    process.stderr.write(`${options.name}: ${(error as Error).message}\n`);
    process.exit(EXIT.config);
  }
  const base = config as unknown as BaseConfig;
  const service = base.SERVICE_NAME ?? options.name;
  const rootLogger = createLogger({ service, level: base.LOG_LEVEL });
  const workers = options.workers?.(config) ?? 1;
  const watching = options.watchdog?.(config);
  if (cluster.isPrimary && (workers > 1 || watching)) return supervise(rootLogger, service, base, workers, options.name, watching?.stateDir, options.workerNodeFlags);
  const workerIndex = cluster.isWorker ? Number(process.env[WORKER_ENV]) : undefined;
  const logger = workerIndex === undefined ? rootLogger : rootLogger.child({ worker: workerIndex });
  // The supervisor checked the state directory; only its workers are watched (a stall kills the process).
  const watchdog = watching && workerIndex !== undefined ? startWatchdog({ ...watching, logger, bindings: { service, worker: workerIndex } }) : undefined;
  const registry = createMetricsRegistry(service);
  const readiness = new Readiness();
  const http = createHttpServer(logger);
  await http.register(opsRoutes, { registry, readiness });
  let instance: Service | undefined;
  let stopping = false;
  // A failure the service cannot get past while running: stop as on SIGTERM, exit non-zero.
  const fail = (error: unknown) => {
    if (stopping) return;
    stopping = true;
    logger.fatal({ err: error, code: isBanstreamError(error) ? error.code : undefined }, `stopping: ${(error as Error).message ?? String(error)}`);
    readiness.markDraining();
    void runShutdown(
      [
        { name: 'service', run: () => instance?.stop() ?? Promise.resolve() },
        { name: 'http', run: () => http.close() },
      ],
      base.SHUTDOWN_TIMEOUT_MS,
    )
      .catch(() => undefined)
      .finally(() => {
        logger.flush();
        process.exit(failureExitCode(error));
      });
  };
  const create = options.create ?? (await options.load?.());
  if (create === undefined) throw new Error(`runService ${options.name}: give create or load`);
  try {
    instance = create({
      config,
      logger,
      registry,
      readiness,
      http,
      fail,
      ...(workerIndex === undefined ? {} : { startTogether: waitAtBarrier }),
      ...(watchdog ? { watchdog } : {}),
    });
  } catch (error) {
    // A factory that finds its configuration wrong (a file it reads, say) is a configuration error too.
    if (!isBanstreamError(error, 'CONFIG_INVALID')) throw error;
    process.stderr.write(`${options.name}: ${error.message}\n`);
    process.exit(EXIT.config);
  }

  const running = instance;
  const stop = async (signal: string) => {
    if (stopping) {
      logger.warn({ signal }, 'second signal: exiting without waiting');
      process.exit(EXIT.shutdownTimeout);
    }
    stopping = true;
    logger.info({ signal }, 'shutting down');
    readiness.markDraining();
    try {
      const report = await runShutdown(
        [
          { name: 'service', run: () => running.stop() },
          { name: 'http', run: () => http.close() },
        ],
        base.SHUTDOWN_TIMEOUT_MS,
      );
      for (const f of report.failed) logger.error({ step: f.step, err: f.error }, 'shutdown step failed');
      logger.info('stopped');
      logger.flush();
      process.exit(report.failed.length === 0 ? EXIT.ok : EXIT.startFailed);
    } catch (error) {
      logger.fatal({ err: error }, 'shutdown timed out');
      logger.flush();
      process.exit(EXIT.shutdownTimeout);
    }
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  if (workerIndex === undefined) {
    process.on('SIGINT', () => void stop('SIGINT'));
    const address = await http.listen({ host: base.HTTP_HOST, port: base.HTTP_PORT });
    logger.info({ address }, 'http listening');
  } else {
    // Ctrl-C reaches the whole process group: the supervisor's SIGTERM directs the stop.
    // Should the supervisor die, node:cluster ends this worker when the IPC channel closes.
    process.on('SIGINT', () => undefined);
    answerSupervisor(registry, readiness);
  }
  try {
    await running.start();
    logger.info('started');
  } catch (error) {
    if (stopping) return;
    stopping = true;
    logger.fatal({ err: error, code: isBanstreamError(error) ? error.code : undefined }, 'start failed');
    await runShutdown(
      [
        { name: 'service', run: () => running.stop() },
        { name: 'http', run: () => http.close() },
      ],
      5_000,
    ).catch(() => undefined);
    logger.flush();
    process.exit(failureExitCode(error));
  }
}

async function supervise(
  logger: Logger,
  service: string,
  base: BaseConfig,
  workers: number,
  name: string,
  stateDir: string | undefined,
  workerNodeFlags: readonly string[] | undefined,
): Promise<void> {
  if (stateDir !== undefined) {
    try {
      new TrapStore(stateDir).ensure();
    } catch (error) {
      process.stderr.write(`${name}: cannot use the state directory ${stateDir}: ${(error as Error).message}\n`);
      process.exit(EXIT.config);
    }
  }
  let stopping = false;
  const stopSignal = new Promise<string>((resolve) => {
    const onSignal = (signal: string) => {
      if (stopping) {
        logger.warn({ signal }, 'second signal: exiting without waiting (workers end with the IPC channel)');
        logger.flush();
        process.exit(EXIT.shutdownTimeout);
      }
      stopping = true;
      resolve(signal);
    };
    process.on('SIGTERM', () => onSignal('SIGTERM'));
    process.on('SIGINT', () => onSignal('SIGINT'));
  });
  const outcome = await runSupervisor(
    {
      service,
      workers,
      logger,
      httpHost: base.HTTP_HOST,
      httpPort: base.HTTP_PORT,
      shutdownTimeoutMs: base.SHUTDOWN_TIMEOUT_MS,
      ...(stateDir === undefined ? {} : { stateDir }),
      ...(workerNodeFlags === undefined ? {} : { workerNodeFlags }),
    },
    stopSignal,
  );
  logger.flush();
  process.exit(typeof outcome === 'object' ? outcome.final : outcome === 'ok' ? EXIT.ok : outcome === 'timeout' ? EXIT.shutdownTimeout : EXIT.startFailed);
}
