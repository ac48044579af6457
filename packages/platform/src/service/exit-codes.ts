import { isBanstreamError } from '@banstream/core';

/**
 * Exit codes a supervisor can act on (sysexits: 77 = permission denied, 78 =
 * configuration error). 77 and 78 are final: starting the process again cannot help
 * until an operator changes something (an ACL, a variable), so a supervisor of workers
 * does not replace a worker that exits with either, it stops the service with that code.
 */
export const EXIT = { ok: 0, startFailed: 1, accessDenied: 77, config: 78, shutdownTimeout: 124 } as const;

/** The exit code for a service that cannot go on because of `error`: 77 when Kafka refused its principal, else 1. */
export function failureExitCode(error: unknown): number {
  return isBanstreamError(error, 'KAFKA_ACCESS_DENIED') ? EXIT.accessDenied : EXIT.startFailed;
}

/** Worker exit codes a supervisor does not answer with a new worker. */
export const FINAL_EXIT_CODES: readonly number[] = [EXIT.accessDenied, EXIT.config];
