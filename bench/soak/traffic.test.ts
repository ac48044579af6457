import { describe, expect, it } from 'vitest';
import { prng } from '../lib.js';
import { DEFAULT_SHAPE, Traffic, attackerIp, clientIp, scraperUser, type TrafficShape } from './traffic.js';

const shape: TrafficShape = { ...DEFAULT_SHAPE, activeIps: 1_000, ipLifetimeMs: 10_000, activeUsers: 500, userLifetimeMs: 20_000 };

/** Runs the generator at `rate` events/s in 100 ms ticks over [fromMs, toMs). */
function run(traffic: Traffic, rate: number, fromMs: number, toMs: number) {
  const events = [];
  for (let t = fromMs; t < toMs; t += 100) events.push(...traffic.next(rate / 10, t, 1_700_000_000_000 + t));
  return events;
}

describe('soak traffic', () => {
  it('rotates its population: keys go idle after their lifetime and new ones keep arriving', () => {
    const traffic = new Traffic(shape, prng(1));
    const first = new Set(run(traffic, 10_000, 0, 5_000).map((e) => e.ip));
    const later = new Set(run(traffic, 10_000, 30_000, 35_000).map((e) => e.ip));
    // 1,000 active addresses, each live 10 s: by 30 s none of the first ones is used.
    expect([...first].filter((ip) => later.has(ip) && ip.startsWith('10.'))).toEqual([]);
    // Key k is active from (k − activeIps) to k lifetimes/activeIps: 4,200 from 32 s to 42 s.
    expect(later.has(clientIp(4_200))).toBe(true);
    expect(later.has(clientIp(2_900))).toBe(false);
    expect(later.size).toBeGreaterThan(1_000);
    expect(later.size).toBeLessThan(1_700);
  });

  it('keeps normal clients far below the attack rates', () => {
    const traffic = new Traffic(shape, prng(2));
    const events = run(traffic, 10_000, 0, 60_000).filter((e) => e.ip.startsWith('10.'));
    const perIp = new Map<string, number>();
    for (const e of events) perIp.set(e.ip, (perIp.get(e.ip) ?? 0) + 1);
    // 10,000/s over 1,000 addresses, each live 10 s: about 100 events per address.
    expect(Math.max(...perIp.values())).toBeLessThan(200);
  });

  it('starts a flood and a scraper in turn, at their rates, and forgets finished attacks', () => {
    const traffic = new Traffic(shape, prng(3));
    const events = run(traffic, 10_000, 0, 40_000);
    const flood0 = events.filter((e) => e.ip === attackerIp(0)).length;
    const scraper1 = events.filter((e) => e.userId === scraperUser(1)).length;
    expect(flood0).toBe(shape.floodRate * (shape.attackMs / 1000));
    expect(scraper1).toBe(shape.scraperRate * (shape.attackMs / 1000));
    expect(new Set(events.filter((e) => e.ip.startsWith('198.18.')).map((e) => e.ip)).size).toBe(10);
    expect(traffic.trackedAttacks).toBeLessThanOrEqual(Math.ceil(shape.attackMs / shape.attackEveryMs) + 2);
    expect(events.length).toBe(400 * 1_000);
  });

  it('is deterministic for a seed and gives unique event ids', () => {
    const a = run(new Traffic(shape, prng(9)), 1_000, 0, 2_000);
    const b = run(new Traffic(shape, prng(9)), 1_000, 0, 2_000);
    expect(a).toEqual(b);
    expect(new Set(a.map((e) => e.eventId)).size).toBe(a.length);
  });
});
