import { Readiness, type ReadinessReport } from '../../lifecycle/readiness.js';
import type { Answer } from './supervisor-ipc.js';

/**
 * A supervisor's readiness: a check per worker (`worker 1`: it answered, ready), and
 * each check the workers report (`kafka`, `partitions rebuilt`…) true only when it
 * holds in every worker that answered, so a probe reads the same names whether the
 * service runs as one process or under a supervisor. The workers are asked once per
 * report.
 */
export class WorkersReadiness extends Readiness {
  constructor(private readonly askAll: () => Promise<(Answer | undefined)[]>) {
    super();
  }

  override async report(): Promise<ReadinessReport> {
    const [own, answers] = await Promise.all([super.report(), this.askAll()]);
    return combine(own, answers);
  }
}

/** Pure: the supervisor's own report and each worker's answer (undefined: none in time). */
export function combine(own: ReadinessReport, answers: readonly (Answer | undefined)[]): ReadinessReport {
  const checks: Record<string, boolean> = { ...own.checks };
  answers.forEach((a, i) => (checks[`worker ${i + 1}`] = a?.readiness?.ready === true));
  for (const a of answers) {
    for (const [name, ok] of Object.entries(a?.readiness?.checks ?? {})) {
      if (name === 'accepting' || name.startsWith('worker ')) continue;
      checks[name] = (checks[name] ?? true) && ok === true;
    }
  }
  return { ready: Object.values(checks).every(Boolean), checks };
}
