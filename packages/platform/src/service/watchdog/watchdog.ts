import { Worker } from 'node:worker_threads';
import type { Logger } from '../../logging/logger.js';
import { InHand, inHandBuffer } from './in-hand.js';
import { TrapStore, type Trap } from './traps.js';
import type { WatchdogThreadData } from './watchdog-thread.js';

export interface WatchdogSettings {
  /** Longest one record may be in hand before its process is killed and the record quarantined. */
  budgetMs: number;
  /** Where traps and stall notes are kept (shared by the processes of a host). */
  stateDir: string;
}

/**
 * One topic's records as the watchdog sees them. Readers call begin() before
 * handling a record synchronously and end() after; trapped() first, to skip a record
 * an earlier process stalled on.
 */
export interface RecordWatch {
  readonly topic: string;
  readonly budgetMs: number;
  /** The trap left for this record, if a process stalled on it. */
  trapped(partition: number, offset: string): Trap | undefined;
  begin(partition: number, offset: string): void;
  /** Ends the record begun; returns how long it was in hand (ms). */
  end(): number;
  /** The trapped record is in the DLQ now: whoever meets it later only skips it. */
  deadLettered(trap: Trap): void;
}

export interface Watchdog {
  readonly budgetMs: number;
  watch(topic: string): RecordWatch;
  /** Reads the traps again: after a rebalance, a partition may come with another process's trap. */
  reload(): void;
  stop(): Promise<void>;
}

/** The event loop may go this long without turning, outside any record, before the process counts as stalled. */
export const LOOP_STALL_MIN_MS = 30_000;

/**
 * Starts the watchdog thread of this process (watchdog-thread.ts) and returns the
 * main thread's side of it. Only for a process a supervisor replaces: a stall kills it.
 */
export function startWatchdog(settings: WatchdogSettings & { logger: Logger; bindings: Record<string, unknown> }): Watchdog {
  const store = new TrapStore(settings.stateDir);
  store.ensure();
  const buffer = inHandBuffer();
  const inHand = new InHand(buffer);
  const pollMs = Math.min(100, Math.max(5, Math.floor(settings.budgetMs / 4)));
  const data: WatchdogThreadData = {
    buffer,
    budgetMs: settings.budgetMs,
    loopMs: Math.max(LOOP_STALL_MIN_MS, 2 * settings.budgetMs),
    pollMs,
    stateDir: settings.stateDir,
    bindings: settings.bindings,
  };
  const thread = new Worker(new URL('./watchdog-thread.js', import.meta.url), { workerData: data, name: 'watchdog' });
  thread.unref();
  thread.on('error', (error) => settings.logger.error({ err: error }, 'watchdog thread failed: stalls are no longer detected'));
  const beat = setInterval(() => inHand.beat(), pollMs);
  beat.unref();
  const watches = new Map<string, TopicWatch>();
  const load = () => {
    const byTopic = new Map<string, Map<string, Trap>>();
    for (const trap of store.all(Date.now())) {
      let traps = byTopic.get(trap.topic);
      if (!traps) byTopic.set(trap.topic, (traps = new Map()));
      traps.set(trapKey(trap.partition, trap.offset), trap);
    }
    for (const [topic, watch] of watches) watch.traps = byTopic.get(topic);
    return byTopic;
  };
  return {
    budgetMs: settings.budgetMs,
    watch(topic) {
      let watch = watches.get(topic);
      if (!watch) {
        watch = new TopicWatch(topic, watches.size, settings.budgetMs, inHand, store);
        watches.set(topic, watch);
        thread.postMessage({ index: watch.index, topic });
        watch.traps = load().get(topic);
      }
      return watch;
    },
    reload() {
      load();
    },
    async stop() {
      clearInterval(beat);
      await thread.terminate();
    },
  };
}

const trapKey = (partition: number, offset: string) => `${partition}:${offset}`;

class TopicWatch implements RecordWatch {
  /** Traps of this topic by partition and offset; undefined when there are none (the usual case). */
  traps: Map<string, Trap> | undefined;

  constructor(
    readonly topic: string,
    readonly index: number,
    readonly budgetMs: number,
    private readonly inHand: InHand,
    private readonly store: TrapStore,
  ) {}

  trapped(partition: number, offset: string): Trap | undefined {
    return this.traps?.get(trapKey(partition, offset));
  }

  begin(partition: number, offset: string): void {
    this.inHand.begin(this.index, partition, Number(offset), Date.now());
  }

  end(): number {
    return this.inHand.end(Date.now());
  }

  deadLettered(trap: Trap): void {
    let marked: Trap;
    try {
      marked = this.store.markDeadLettered(trap, Date.now());
    } catch {
      // Not kept for the next process, which dead-letters it once more: better than losing it.
      marked = { ...trap, deadLetteredAt: Date.now() };
    }
    this.traps?.set(trapKey(trap.partition, trap.offset), marked);
  }
}

/** A watch for a process without a watchdog (a library, a test): it only measures. */
export function unwatched(topic: string, budgetMs: number): RecordWatch {
  let since = 0;
  return {
    topic,
    budgetMs,
    trapped: () => undefined,
    begin: () => void (since = Date.now()),
    end: () => Date.now() - since,
    deadLettered: () => undefined,
  };
}
