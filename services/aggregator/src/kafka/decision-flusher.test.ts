import { describe, expect, it } from 'vitest';
import { Registry } from '@banstream/platform';
import type { Ban } from '@banstream/schemas';
import { Outbox, type Drained } from '@banstream/engine';
import { aggregatorMetrics } from '../metrics.js';
import { DecisionFlusher, retryUntilDone, SerialPublications } from './decision-flusher.js';
import { PendingPublications } from './pending-publications.js';

const ban = (subject: string): Ban => ({
  banId: `b-${subject}`,
  subject,
  policyId: 'p',
  reason: 'r',
  evidenceCount: 1,
  windowSeconds: 60,
  startedAt: 0,
  expiresAt: 1,
  preview: false,
  escalationLevel: 0,
  origin: 'aggregator',
  httpStatus: 403,
  createdBy: null,
});

/** A publisher whose publications fail their first `failures` attempts, as a producer does while Kafka is away. */
function setup(failures: number) {
  const outbox = new Outbox();
  const registry = new Registry();
  const published: string[] = [];
  const retries: number[] = [];
  let calls = 0;
  const flusher = new DecisionFlusher({
    outbox,
    retryMs: 1,
    metrics: aggregatorMetrics(registry),
    publisher: {
      decisions: (drained: Drained) => async () => {
        if (++calls <= failures) throw new Error('kafka away');
        for (const b of drained.bans) published.push(`${b.key}:${b.value ? 'ban' : 'tombstone'}`);
      },
    },
    onRetry: (_e, attempt) => retries.push(attempt),
  });
  return { outbox, flusher, published, retries, registry };
}

describe('DecisionFlusher', () => {
  it('retries a failed publication until Kafka takes it, keeping order with later flushes, and does not fail later flushes', async () => {
    const { outbox, flusher, published, retries } = setup(3);
    outbox.bans.push({ key: 'ip:1', value: ban('ip:1') });
    const first = flusher.flush();
    outbox.bans.push({ key: 'ip:1', value: null });
    const second = flusher.flush();
    await Promise.all([first, second]);
    expect(published).toEqual(['ip:1:ban', 'ip:1:tombstone']);
    expect(retries).toEqual([1, 2, 3]);
    outbox.bans.push({ key: 'ip:2', value: ban('ip:2') });
    await flusher.flush();
    expect(published.at(-1)).toBe('ip:2:ban');
  });

  it('counts what a publication put on Kafka once it is acknowledged, not once per attempt', async () => {
    const { outbox, flusher, registry } = setup(2);
    outbox.bans.push({ key: 'ip:1', value: ban('ip:1') }, { key: 'ip:2', value: ban('ip:2') }, { key: 'ip:1', value: null });
    await flusher.flush();
    const bans = await registry.getSingleMetric('banstream_aggregator_bans_emitted_total')!.get();
    expect(bans.values.map((v) => [v.labels, v.value])).toEqual([[{ policy: 'p', preview: 'false' }, 2]]);
  });

  it('fails instead of retrying once stopped, so a shutdown without Kafka ends', async () => {
    const { outbox, flusher } = setup(Infinity);
    flusher.stop();
    outbox.bans.push({ key: 'ip:1', value: ban('ip:1') });
    await expect(flusher.flush()).rejects.toThrow('kafka away');
  });
});

describe('retryUntilDone', () => {
  it('retries a failing publication until Kafka takes it, and gives up only once stopped', async () => {
    let calls = 0;
    const retries: number[] = [];
    await retryUntilDone(
      async () => {
        if (++calls < 4) throw new Error('broker away');
      },
      { retryMs: 1, stopped: () => false, onRetry: (_e, attempt) => retries.push(attempt) },
    );
    expect(calls).toBe(4);
    expect(retries).toEqual([1, 2, 3]);
    await expect(
      retryUntilDone(
        async () => {
          throw new Error('broker away');
        },
        { retryMs: 1, stopped: () => true, onRetry: () => undefined },
      ),
    ).rejects.toThrow('broker away');
  });
});

describe('PendingPublications', () => {
  it('shows how long a publication has been under way, retries included, until it is done', async () => {
    const pending = new PendingPublications();
    const seen: number[] = [];
    let calls = 0;
    const start = Date.now();
    await retryUntilDone(
      async () => {
        seen.push(pending.longestMs(Date.now()));
        if (++calls < 4) throw new Error('broker away');
      },
      { retryMs: 20, stopped: () => false, pending, onRetry: () => undefined },
    );
    expect(seen[0]).toBeLessThan(20);
    expect(seen[3]).toBeGreaterThanOrEqual(55);
    expect(pending.longestMs(start + 60_000)).toBe(0);
  });

  it('keeps the oldest of several, and forgets one given up (stopped)', async () => {
    const pending = new PendingPublications();
    const first = pending.begin(1_000);
    const second = pending.begin(5_000);
    expect(pending.longestMs(6_000)).toBe(5_000);
    first();
    expect(pending.longestMs(6_000)).toBe(1_000);
    second();
    expect(pending.longestMs(6_000)).toBe(0);
    await expect(
      retryUntilDone(
        async () => {
          throw new Error('kafka away');
        },
        { retryMs: 1, stopped: () => true, pending, onRetry: () => undefined },
      ),
    ).rejects.toThrow();
    expect(pending.longestMs(Date.now() + 1_000)).toBe(0);
  });
});

const noop = () => undefined;

describe('SerialPublications', () => {
  it('runs one publication at a time and retries a failed one, unchanged, before the next starts', async () => {
    const calls: string[] = [];
    let failuresLeft = 2;
    const serial = new SerialPublications({ retryMs: 1, stopped: () => false });
    let inFlight = 0;
    let peak = 0;
    const publication = (name: string, fail: boolean) => async () => {
      inFlight++;
      peak = Math.max(peak, inFlight);
      calls.push(name);
      await new Promise((r) => setTimeout(r, 2));
      inFlight--;
      if (fail && failuresLeft-- > 0) throw new Error('request timed out');
    };
    await Promise.all([serial.run(publication('a', true), noop), serial.run(publication('b', false), noop), serial.run(publication('c', false), noop)]);
    expect(calls).toEqual(['a', 'a', 'a', 'b', 'c']);
    expect(peak).toBe(1);
  });

  it('lets later publications go on after one that failed for good (stopped)', async () => {
    let stopped = false;
    const serial = new SerialPublications({ retryMs: 1, stopped: () => stopped });
    stopped = true;
    await expect(
      serial.run(async () => {
        throw new Error('kafka away');
      }, noop),
    ).rejects.toThrow('kafka away');
    let ran = false;
    await serial.run(async () => {
      ran = true;
    }, noop);
    expect(ran).toBe(true);
  });
});
