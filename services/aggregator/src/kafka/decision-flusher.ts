import type { Drained, Outbox } from '@banstream/engine';
import { countPublished, type AggregatorMetrics } from '../metrics.js';
import type { PendingPublications } from './pending-publications.js';
import type { Publisher } from './publisher.js';

export interface DecisionFlusherOptions {
  outbox: Outbox;
  /** Where the outbox's records go: its publication of them resolves once Kafka has acknowledged them. */
  publisher: Pick<Publisher, 'decisions'>;
  /** Counts what each publication put on Kafka, when given. */
  metrics?: AggregatorMetrics;
  /** Told of each failed attempt before it is retried. */
  onRetry(error: unknown, attempt: number): void;
  retryMs?: number;
  /** Where a publication under way shows. */
  pending?: PendingPublications;
}

/**
 * Publishes what the outbox holds to the publisher, each publication after the one before, so the
 * records of one key keep their order (a ban, then its tombstone). A failed
 * publication (Kafka away) is retried until it succeeds: nothing decided is lost,
 * later flushes wait behind it (so their input offsets are not committed), and one
 * failure does not fail every later flush. After stop(), a failure is final.
 */
export class DecisionFlusher {
  private chain: Promise<void> = Promise.resolve();
  private stopped = false;

  constructor(private readonly options: DecisionFlusherOptions) {}

  flush(): Promise<void> {
    const { outbox } = this.options;
    if (outbox.size === 0) return this.chain;
    const drained = outbox.drain();
    this.chain = this.chain.then(() => this.publishUntilDone(drained));
    return this.chain;
  }

  /** Retries no more (shutdown): a publication that fails from now on rejects. */
  stop(): void {
    this.stopped = true;
  }

  get isStopped(): boolean {
    return this.stopped;
  }

  private async publishUntilDone(drained: Drained): Promise<void> {
    const { publisher, metrics, onRetry, retryMs, pending } = this.options;
    // Encoded once; a failed attempt sends the same records again.
    await retryUntilDone(publisher.decisions(drained), { onRetry, retryMs, pending, stopped: () => this.stopped });
    if (metrics) countPublished(metrics, drained);
  }
}

export interface RetryOptions {
  onRetry(error: unknown, attempt: number): void;
  retryMs?: number | undefined;
  /** True once the service stops: the failure is then final. */
  stopped(): boolean;
  /** Where this publication shows while it is under way. */
  pending?: PendingPublications | undefined;
}

/**
 * Runs `publish` until it succeeds. Output the aggregator owes Kafka (decisions, the
 * repartition, dead letters) must not be dropped when Kafka is away: the input it
 * came from is never read again (its offsets are behind the partition's position),
 * so an output given up is an event never counted. A record Kafka refuses for what it
 * is does not fail the publication (Publisher dead-letters it); a publication under
 * way for long shows in `pending`.
 */
export async function retryUntilDone(publish: () => Promise<void>, options: RetryOptions): Promise<void> {
  const done = options.pending?.begin(Date.now());
  try {
    for (let attempt = 1; ; attempt++) {
      try {
        await publish();
        return;
      } catch (error) {
        if (options.stopped()) throw error;
        options.onRetry(error, attempt);
        await new Promise((r) => setTimeout(r, options.retryMs ?? 500));
      }
    }
  } finally {
    done?.();
  }
}

/**
 * Publications through one idempotent producer, one at a time, each retried until
 * done before the next starts. kafkajs hands a failed request's sequence numbers to
 * the next request to the same partition; had the failed one been written after all
 * (its answer lost to a timeout or a broker restart), the broker would take the next
 * for a duplicate of it, acknowledge it and not write it: repartition records, and
 * the counts they carry, would be lost. Retried alone and unchanged, a failed
 * publication is deduplicated, never mistaken. kafkajs already sends one request at
 * a time per broker for an idempotent producer, so this costs no parallelism there.
 */
export class SerialPublications {
  private chain: Promise<void> = Promise.resolve();

  constructor(private readonly options: Omit<RetryOptions, 'onRetry'>) {}

  /** Resolves once `publish` has succeeded, after every publication queued before it. */
  run(publish: () => Promise<void>, onRetry: RetryOptions['onRetry']): Promise<void> {
    const done = this.chain.then(() => retryUntilDone(publish, { ...this.options, onRetry }));
    this.chain = done.catch(() => undefined);
    return done;
  }
}
