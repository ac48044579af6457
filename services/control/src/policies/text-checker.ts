import { existsSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { ProblemError } from '@banstream/platform';
import { checkPolicyText, type TextCheck } from './text-check.js';

export interface TextCheckerOptions {
  /** The longest one text may take to check before its worker is ended. */
  deadlineMs: number;
  /** Texts waiting behind the one being checked; past it, POLICY_CHECK_BUSY. */
  maxWaiting: number;
}

interface Job {
  id: number;
  text: string;
  resolve: (result: TextCheck) => void;
  reject: (error: unknown) => void;
}

/**
 * Checks policy texts in a worker thread, one at a time, each within a deadline: a YAML
 * text of a megabyte takes seconds to parse, and any reader of the API may send one,
 * so the parse must not hold control's event loop (the API, the console, the ban
 * sweep). A text past its deadline ends the worker (a new one starts for the next).
 * Where the compiled worker is absent (unit tests on the sources), it checks in-line.
 */
export class TextChecker {
  private worker: Worker | undefined;
  private readonly queue: Job[] = [];
  private running: Job | undefined;
  private timer: NodeJS.Timeout | undefined;
  private nextId = 1;
  private closed = false;
  private readonly workerFile = new URL('./text-check-worker.js', import.meta.url);
  private readonly inWorker = existsSync(this.workerFile);

  constructor(private readonly options: TextCheckerOptions) {}

  check(text: string): Promise<TextCheck> {
    if (!this.inWorker) return Promise.resolve(checkPolicyText(text));
    if (this.closed) return Promise.reject(new ProblemError('POLICY_CHECK_BUSY', 'control is stopping'));
    if (this.queue.length >= this.options.maxWaiting) {
      return Promise.reject(new ProblemError('POLICY_CHECK_BUSY', 'too many policy texts are waiting to be checked; retry in a moment'));
    }
    return new Promise((resolve, reject) => {
      this.queue.push({ id: this.nextId++, text, resolve, reject });
      this.next();
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.queue.splice(0)) job.reject(new ProblemError('POLICY_CHECK_BUSY', 'control is stopping'));
    this.running?.reject(new ProblemError('POLICY_CHECK_BUSY', 'control is stopping'));
    this.running = undefined;
    clearTimeout(this.timer);
    await this.worker?.terminate();
    this.worker = undefined;
  }

  private next(): void {
    if (this.running || this.queue.length === 0) return;
    const job = this.queue.shift()!;
    this.running = job;
    this.started().postMessage({ id: job.id, text: job.text });
    this.timer = setTimeout(() => {
      this.finish(job.id, () => job.reject(new ProblemError('POLICY_CHECK_TIMEOUT', `the text took longer than ${this.options.deadlineMs} ms to check: split it, or check it with the CLI`)));
      const stuck = this.worker;
      this.worker = undefined;
      void stuck?.terminate();
    }, this.options.deadlineMs);
  }

  private started(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(this.workerFile);
    worker.unref();
    worker.on('message', (message: { id: number; result: TextCheck }) => this.finish(message.id, () => this.running?.resolve(message.result)));
    worker.on('error', (error) => {
      if (this.worker === worker) this.worker = undefined;
      const job = this.running;
      if (job) this.finish(job.id, () => job.reject(error));
    });
    worker.on('exit', () => {
      if (this.worker === worker) this.worker = undefined;
    });
    this.worker = worker;
    return worker;
  }

  private finish(id: number, settle: () => void): void {
    if (this.running?.id !== id) return;
    clearTimeout(this.timer);
    settle();
    this.running = undefined;
    this.next();
  }
}
