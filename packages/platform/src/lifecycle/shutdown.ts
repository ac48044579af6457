import { BanstreamError } from '@banstream/core';

/**
 * Runs shutdown steps in order, the whole sequence bounded by one deadline. A step
 * that throws is reported and the next still runs: a failed commit must not keep
 * connections open. Rejects with SHUTDOWN_TIMEOUT when the deadline passes.
 */
export interface ShutdownStep {
  name: string;
  run: () => Promise<void>;
}

export interface ShutdownReport {
  failed: { step: string; error: unknown }[];
}

export async function runShutdown(steps: readonly ShutdownStep[], timeoutMs: number): Promise<ShutdownReport> {
  const report: ShutdownReport = { failed: [] };
  let current = '';
  const sequence = (async () => {
    for (const step of steps) {
      current = step.name;
      try {
        await step.run();
      } catch (error) {
        report.failed.push({ step: step.name, error });
      }
    }
    return report;
  })();
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new BanstreamError('SHUTDOWN_TIMEOUT', `shutdown did not finish within ${timeoutMs} ms (stuck in "${current}")`, { details: { step: current } })), timeoutMs);
    timer.unref();
  });
  try {
    return await Promise.race([sequence, deadline]);
  } finally {
    clearTimeout(timer);
  }
}
