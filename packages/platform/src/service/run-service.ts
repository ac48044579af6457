import type { TProperties, TObject, Static } from '@sinclair/typebox';
import { isBanstreamError } from '@banstream/core';
import { loadConfig, type EnvSource } from '../config/load.js';
import { createLogger } from '../logging/logger.js';
import { createMetricsRegistry } from '../metrics/registry.js';
import { createHttpServer, opsRoutes } from '../http/ops-server.js';
import { Readiness } from '../lifecycle/readiness.js';
import { runShutdown } from '../lifecycle/shutdown.js';
import type { Service, ServiceDeps } from '../lifecycle/service.js';
import { env } from '../config/env.js';

/** Exit codes a supervisor can act on (sysexits: 78 = configuration error). */
export const EXIT = { ok: 0, startFailed: 1, config: 78, shutdownTimeout: 124 } as const;

/** The variables every service reads; a service spreads these and adds its own. */
export const baseEnv = {
  SERVICE_NAME: env.SERVICE_NAME,
  LOG_LEVEL: env.LOG_LEVEL,
  HTTP_HOST: env.HTTP_HOST,
  SHUTDOWN_TIMEOUT_MS: env.SHUTDOWN_TIMEOUT_MS,
};

type BaseConfig = Static<TObject<typeof baseEnv>> & { HTTP_PORT: number };

export interface RunServiceOptions<P extends TProperties> {
  name: string;
  env: P;
  create: (deps: ServiceDeps<Readonly<Static<TObject<P>>>>) => Service;
  source?: EnvSource;
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
  const logger = createLogger({ service, level: base.LOG_LEVEL });
  const registry = createMetricsRegistry(service);
  const readiness = new Readiness();
  const http = createHttpServer(logger);
  await http.register(opsRoutes, { registry, readiness });
  let instance: Service;
  try {
    instance = options.create({ config, logger, registry, readiness, http });
  } catch (error) {
    // A factory that finds its configuration wrong (a file it reads, say) is a configuration error too.
    if (!isBanstreamError(error, 'CONFIG_INVALID')) throw error;
    process.stderr.write(`${options.name}: ${error.message}\n`);
    process.exit(EXIT.config);
  }

  let stopping = false;
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
          { name: 'service', run: () => instance.stop() },
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
  process.on('SIGINT', () => void stop('SIGINT'));

  const address = await http.listen({ host: base.HTTP_HOST, port: base.HTTP_PORT });
  logger.info({ address }, 'http listening');
  try {
    await instance.start();
    logger.info('started');
  } catch (error) {
    logger.fatal({ err: error, code: isBanstreamError(error) ? error.code : undefined }, 'start failed');
    await runShutdown([{ name: 'service', run: () => instance.stop() }, { name: 'http', run: () => http.close() }], 5_000).catch(() => undefined);
    logger.flush();
    process.exit(EXIT.startFailed);
  }
}
