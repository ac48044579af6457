import cluster, { type Worker } from 'node:cluster';
import type { EnvName } from '../../config/env.js';
import type { Logger } from '../../logging/logger.js';
import { RestartBackoff } from './restart-backoff.js';
import { GO, isAnswer, isAnswering, isAtBarrier, type Answer, type Ask, type Question } from './supervisor-ipc.js';

/** Tells a process started by the pool which worker it is (1…count). */
export const WORKER_ENV = 'BANSTREAM_WORKER' satisfies EnvName;

interface Slot {
  index: number;
  worker: Worker | undefined;
  startedAt: number;
  restart: NodeJS.Timeout | undefined;
  backoff: RestartBackoff;
}

/** The start barrier opens without the workers still missing this long after the first arrived. */
const BARRIER_TIMEOUT_MS = 15_000;

export interface WorkerPoolOptions {
  count: number;
  logger: Logger;
  /** Called each time a dead worker is scheduled for replacement. */
  onReplace?: (exit: WorkerExit) => void;
  /** Exit codes after which a worker is not replaced (starting it again cannot help), and who is told instead. */
  finalCodes?: readonly number[];
  onFinal?: (exit: WorkerExit) => void;
  /** Node flags of the workers, in place of the supervisor's own flags of the same names. */
  nodeFlags?: readonly string[];
}

/** The supervisor's node flags with `flags` in place of those of the same names (`--name` or `--name=value`). */
export function workerExecArgv(own: readonly string[], flags: readonly string[]): string[] {
  const nameOf = (flag: string) => flag.split('=', 1)[0]!;
  const replaced = new Set(flags.map(nameOf));
  return [...own.filter((flag) => !replaced.has(nameOf(flag))), ...flags];
}

export interface WorkerExit {
  worker: number;
  pid: number | undefined;
  code: number | null;
  signal: string | null;
}

export interface PoolStopReport {
  /** Every worker exited by itself, with code 0, within the time given. */
  clean: boolean;
  /** Workers still alive at the deadline, killed with SIGKILL. */
  killed: number;
}

/**
 * A fixed number of worker processes (node:cluster, each running the same entry
 * point) kept alive: a worker that dies is replaced after a backoff (unless it exits
 * with one of `finalCodes`), and the pool answers for them (ask). Stopping sends each SIGTERM and waits for its own
 * graceful shutdown.
 */
export class WorkerPool {
  private readonly slots: Slot[];
  private readonly waiting = new Map<number, (answer: Answer) => void>();
  /** Workers that said they listen for questions (ANSWERING); the others are not asked. */
  private readonly answering = new WeakSet<Worker>();
  private nextId = 0;
  private stopping = false;
  private readonly barrier = { open: false, waiting: new Set<Worker>(), timer: undefined as NodeJS.Timeout | undefined };

  constructor(private readonly options: WorkerPoolOptions) {
    this.slots = Array.from({ length: options.count }, (_, i) => ({
      index: i + 1,
      worker: undefined,
      startedAt: 0,
      restart: undefined,
      backoff: new RestartBackoff(),
    }));
  }

  start(): void {
    for (const slot of this.slots) this.fork(slot);
  }

  /** Workers alive now. */
  running(): number {
    return this.slots.filter((s) => s.worker !== undefined).length;
  }

  /** Asks worker `index`; undefined at once if it is not alive or not listening yet, or if it does not answer in time. */
  ask(index: number, question: Question, timeoutMs: number): Promise<Answer | undefined> {
    const worker = this.slots[index - 1]?.worker;
    if (!worker || !worker.isConnected() || !this.answering.has(worker)) return Promise.resolve(undefined);
    const id = this.nextId++;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiting.delete(id);
        resolve(undefined);
      }, timeoutMs);
      this.waiting.set(id, (answer) => {
        clearTimeout(timer);
        resolve(answer);
      });
      worker.send({ type: 'banstream:ask', id, question } satisfies Ask, (error: Error | null) => {
        if (error) this.settle({ type: 'banstream:answer', id, error: error.message });
      });
    });
  }

  /** Asks every worker at once: one entry per worker, in order. */
  askAll(question: Question, timeoutMs: number): Promise<(Answer | undefined)[]> {
    return Promise.all(this.slots.map((s) => this.ask(s.index, question, timeoutMs)));
  }

  /** SIGTERM to every worker; those alive after `timeoutMs` get SIGKILL. */
  async stop(timeoutMs: number): Promise<PoolStopReport> {
    this.stopping = true;
    clearTimeout(this.barrier.timer);
    const exits: Promise<boolean>[] = [];
    for (const slot of this.slots) {
      clearTimeout(slot.restart);
      const worker = slot.worker;
      if (!worker) continue;
      exits.push(new Promise((resolve) => worker.once('exit', (code: number | null) => resolve(code === 0))));
      worker.process.kill('SIGTERM');
    }
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), timeoutMs)));
    const outcome = await Promise.race([Promise.all(exits), deadline]);
    clearTimeout(timer);
    if (outcome !== 'late') return { clean: outcome.every(Boolean), killed: 0 };
    let killed = 0;
    for (const slot of this.slots) {
      if (!slot.worker) continue;
      this.options.logger.error({ worker: slot.index, pid: slot.worker.process.pid }, `worker still running ${timeoutMs} ms after SIGTERM: killing it`);
      slot.worker.process.kill('SIGKILL');
      killed++;
    }
    return { clean: false, killed };
  }

  private fork(slot: Slot): void {
    cluster.setupPrimary({
      // V8's serializer, not JSON: a worker's metrics text (tens of KB a scrape) crosses without being escaped and parsed.
      serialization: 'advanced',
      execArgv: workerExecArgv(process.execArgv, this.options.nodeFlags ?? []),
    });
    const worker = cluster.fork({ [WORKER_ENV]: String(slot.index) });
    slot.worker = worker;
    slot.startedAt = Date.now();
    worker.on('message', (message: unknown) => {
      if (isAnswer(message)) this.settle(message);
      else if (isAnswering(message)) this.answering.add(worker);
      else if (isAtBarrier(message)) this.atBarrier(worker);
    });
    worker.once('exit', (code: number | null, signal: string | null) => this.onExit(slot, worker, code, signal));
    this.options.logger.info({ worker: slot.index, pid: worker.process.pid }, 'worker started');
  }

  private onExit(slot: Slot, worker: Worker, code: number | null, signal: string | null): void {
    if (slot.worker === worker) slot.worker = undefined;
    const facts: WorkerExit = { worker: slot.index, pid: worker.process.pid, code, signal };
    if (this.stopping) {
      this.options.logger.info(facts, 'worker stopped');
      return;
    }
    if (code !== null && this.options.finalCodes?.includes(code)) {
      this.options.logger.fatal(facts, `worker exited with ${code}: not replacing it (starting it again cannot help)`);
      this.options.onFinal?.(facts);
      return;
    }
    const livedMs = Date.now() - slot.startedAt;
    const waitMs = slot.backoff.next(livedMs);
    // Its partitions go to the other workers at the group's next rebalance, and come back when it does.
    this.options.logger.error({ ...facts, livedMs, replaceInMs: waitMs }, 'worker died: replacing it');
    this.options.onReplace?.(facts);
    slot.restart = setTimeout(() => {
      slot.restart = undefined;
      if (!this.stopping) this.fork(slot);
    }, waitMs);
  }

  /**
   * The first workers wait for each other here, so their consumers join the groups in
   * one rebalance instead of one each (the work done before a rebalance is replayed).
   * A replacement worker finds the barrier open.
   */
  private atBarrier(worker: Worker): void {
    if (this.barrier.open) {
      worker.send(GO);
      return;
    }
    this.barrier.waiting.add(worker);
    this.barrier.timer ??= setTimeout(() => this.openBarrier(`${BARRIER_TIMEOUT_MS} ms passed`), BARRIER_TIMEOUT_MS);
    if (this.barrier.waiting.size >= this.options.count) this.openBarrier('every worker is there');
  }

  private openBarrier(why: string): void {
    clearTimeout(this.barrier.timer);
    this.barrier.open = true;
    const waiting = [...this.barrier.waiting].filter((w) => w.isConnected());
    this.barrier.waiting.clear();
    this.options.logger.info({ workers: waiting.length, why }, 'start barrier open: workers join their groups');
    for (const w of waiting) w.send(GO);
  }

  private settle(answer: Answer): void {
    const done = this.waiting.get(answer.id);
    if (!done) return;
    this.waiting.delete(answer.id);
    done(answer);
  }
}
