import type { FastifyInstance } from 'fastify';
import type { Registry } from 'prom-client';
import type { Logger } from '../logging/logger.js';
import type { Readiness } from './readiness.js';

/** What every service factory returns: started once, stopped once, in that order. */
export interface Service {
  /** Connect, catch up, begin work. Resolves when the service can do its job. */
  start(): Promise<void>;
  /** Stop intake, drain in-flight work, commit, close connections. */
  stop(): Promise<void>;
}

/** What the wiring hands to every service factory. */
export interface ServiceDeps<C> {
  config: C;
  logger: Logger;
  registry: Registry;
  readiness: Readiness;
  /** The service's HTTP server: ops routes are on it; a service may add its own. */
  http: FastifyInstance;
  /**
   * Set in a supervised worker (runService's `workers`): resolves when every worker
   * of the first start has reached it, so Kafka consumers started right after join
   * their groups together.
   */
  startTogether?: () => Promise<void>;
  /**
   * Ends the process for a failure the service cannot get past while running (Kafka
   * refusing its principal, say): logged at fatal, not ready at once, stopped as on
   * SIGTERM, exit 77 for KAFKA_ACCESS_DENIED, else 1. Set by runService; absent when a
   * test builds the service in its own process.
   */
  fail?: (error: unknown) => void;
}
