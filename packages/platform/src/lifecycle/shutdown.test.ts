import { describe, expect, it } from 'vitest';
import { isBanstreamError } from '@banstream/core';
import { runShutdown } from './shutdown.js';
import { withDeadline } from './deadline.js';
import { Readiness } from './readiness.js';

describe('runShutdown', () => {
  it('runs every step in order even when one fails', async () => {
    const ran: string[] = [];
    const report = await runShutdown(
      [
        { name: 'intake', run: async () => void ran.push('intake') },
        {
          name: 'commit',
          run: async () => {
            ran.push('commit');
            throw new Error('broker gone');
          },
        },
        { name: 'close', run: async () => void ran.push('close') },
      ],
      1_000,
    );
    expect(ran).toEqual(['intake', 'commit', 'close']);
    expect(report.failed.map((f) => f.step)).toEqual(['commit']);
  });

  it('gives up at the deadline and names the stuck step', async () => {
    const error = await runShutdown([{ name: 'drain', run: () => new Promise(() => undefined) }], 50).catch((e: unknown) => e);
    expect(isBanstreamError(error, 'SHUTDOWN_TIMEOUT')).toBe(true);
    expect((error as Error).message).toBe('shutdown did not finish within 50 ms (stuck in "drain")');
  });
});

describe('withDeadline', () => {
  it('passes the value through when in time', async () => {
    expect(await withDeadline(Promise.resolve(7), 100, 'x')).toBe(7);
  });

  it('rejects with a retryable, named timeout', async () => {
    const error = await withDeadline(new Promise(() => undefined), 20, 'kafka send').catch((e: unknown) => e);
    expect(isBanstreamError(error, 'KAFKA_TIMEOUT')).toBe(true);
    expect((error as Error).message).toBe('kafka send: no answer within 20 ms');
    expect((error as { retryable: boolean }).retryable).toBe(true);
  });
});

describe('Readiness', () => {
  it('is ready only when every check passes, and never once draining', async () => {
    const readiness = new Readiness();
    let kafka = false;
    readiness.add('kafka', () => kafka);
    readiness.add('redis', async () => {
      throw new Error('down');
    });
    expect(await readiness.report()).toEqual({ ready: false, checks: { accepting: true, kafka: false, redis: false } });
    kafka = true;
    readiness.add('redis', () => true);
    expect((await readiness.report()).ready).toBe(true);
    readiness.markDraining();
    expect(await readiness.report()).toEqual({ ready: false, checks: { accepting: false, kafka: true, redis: true } });
  });
});
