import { randomUUID } from 'node:crypto';
import type { Admin, Kafka } from '@banstream/kafka';
import type { BacktestReport } from '@banstream/api';
import { Allowlist, compilePolicy, type PolicySpec } from '@banstream/core';
import { ProblemError, type Logger } from '@banstream/platform';
import { allowlistEntry, type SchemaCatalog } from '@banstream/schemas';
import { countedEventsDecoder } from '@banstream/engine';
import { specOfRecord } from '../policies/records.js';
import type { ControlState } from '../state/control-state.js';
import { Backtest } from './backtest.js';
import { readRange } from './range-reader.js';

export interface BacktestJobsOptions {
  kafka: Kafka;
  admin: Admin;
  logger: Logger;
  catalog: SchemaCatalog;
  topics: { events: string; subjects: string };
  graceMs: number;
  maxFutureMs: number;
  state: ControlState;
  clock: () => number;
  /** Backtests running at once; more are refused with 429 (each takes a core while it runs). */
  concurrency?: number;
  onFinished?(state: 'done' | 'failed'): void;
}

export interface BacktestRequest {
  candidate: PolicySpec;
  /** Replay the version on the policies topic alongside, for comparison. */
  compare: boolean;
  from: number;
  to: number;
  actor: string;
}

export interface JobView {
  id: string;
  state: 'running' | 'done' | 'failed';
  policyId: string;
  createdBy: string;
  createdAt: number;
  from: number;
  to: number;
  progress: { records: number; total: number };
  result?: BacktestReport;
  error?: string;
}

const KEPT = 20;

/** Backtests run in the background; clients poll their progress and result. */
export class BacktestJobs {
  private readonly jobs = new Map<string, JobView>();
  private readonly aborts = new Map<string, AbortController>();

  constructor(private readonly options: BacktestJobsOptions) {}

  get(id: string): JobView | undefined {
    return this.jobs.get(id);
  }

  list(): JobView[] {
    return [...this.jobs.values()].reverse().map(({ result: _r, ...summary }) => summary);
  }

  start(request: BacktestRequest): JobView {
    const running = [...this.jobs.values()].filter((j) => j.state === 'running').length;
    if (running >= (this.options.concurrency ?? 1)) throw new ProblemError('BACKTEST_BUSY', `${running} backtest(s) already running on this instance; retry when it is done`);
    const job: JobView = {
      id: randomUUID(),
      state: 'running',
      policyId: request.candidate.id,
      createdBy: request.actor,
      createdAt: this.options.clock(),
      from: request.from,
      to: request.to,
      progress: { records: 0, total: 0 },
    };
    this.jobs.set(job.id, job);
    for (const id of [...this.jobs.keys()].slice(0, Math.max(0, this.jobs.size - KEPT))) if (this.jobs.get(id)!.state !== 'running') this.jobs.delete(id);
    const abort = new AbortController();
    this.aborts.set(job.id, abort);
    void this.run(job, request, abort.signal)
      .then((result) => Object.assign(job, { state: 'done', result }))
      .catch((error: unknown) => {
        this.options.logger.warn({ err: error, backtest: job.id }, 'backtest failed');
        Object.assign(job, { state: 'failed', error: error instanceof Error ? error.message : String(error) });
      })
      .finally(() => {
        this.aborts.delete(job.id);
        this.options.onFinished?.(job.state === 'failed' ? 'failed' : 'done');
      });
    return job;
  }

  stopAll(): void {
    for (const a of this.aborts.values()) a.abort();
  }

  private async run(job: JobView, request: BacktestRequest, signal: AbortSignal): Promise<BacktestReport> {
    const { kafka, admin, logger, catalog, topics, state } = this.options;
    const metadata = await admin.fetchTopicMetadata({ topics: [topics.subjects] });
    const subjectPartitions = metadata.topics[0]?.partitions.length ?? 1;
    const allowlist = new Allowlist();
    for (const e of state.allowlist.values()) allowlist.add(allowlistEntry(e));
    const held = request.compare ? state.policies.get(request.candidate.id) : undefined;
    const activeSpec = held && specOfRecord(held);
    const backtest = new Backtest({
      candidate: compilePolicy(request.candidate),
      ...(held && activeSpec ? { active: { policy: compilePolicy(activeSpec), version: held.version } } : {}),
      graceMs: this.options.graceMs,
      maxFutureMs: this.options.maxFutureMs,
      subjectPartitions,
      allowlist,
    });
    const decoder = countedEventsDecoder(catalog);
    await readRange({
      kafka,
      admin,
      logger,
      topic: topics.events,
      groupId: `banstream-control.backtest.${job.id}`,
      from: request.from,
      to: request.to,
      signal,
      onRecord: (r) => {
        let events;
        try {
          if (r.value === null) throw new Error('empty');
          events = decoder.decode(r.value).events;
        } catch {
          backtest.undecodable++;
          return;
        }
        backtest.record(r.partition, r.offset, r.timestamp, events);
      },
      onProgress: (records, total) => (job.progress = { records, total }),
    });
    return backtest.report({ from: request.from, to: request.to });
  }
}
