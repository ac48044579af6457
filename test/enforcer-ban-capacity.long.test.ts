import { spawn } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { exitOf, REPO_ROOT } from './support/processes.js';

/** More IPv4 address bans than the former table's one array could hold (8,388,608): the capacity plan's target. */
const BANS = 10_000_000;
/** The child's heap: the index and the rows of ten million bans (about 600 MB), with room to spare. */
const HEAP_MB = 3_072;

/**
 * The built BanCache, in a process of its own with a known heap, is fed ten million
 * address bans, then one more. A table that cannot hold them kills that process (V8's
 * "invalid size" error is a fatal abort, which no code can catch): the test sees its
 * exit code and what it printed, rather than the test runner dying.
 */
describe('the enforcer ban cache at ten million address bans', () => {
  it('holds 10,000,000 IPv4 address bans in one process, refuses the next one, and still takes a manual one', async () => {
    const banCache = pathToFileURL(`${REPO_ROOT}services/enforcer/dist/cache/ban-cache.js`).href;
    const child = `
      import { parseIp } from '@banstream/core';
      import { BanCache } from ${JSON.stringify(banCache)};
      const now = Date.now();
      const ban = (subject, origin = 'aggregator') => ({ banId: 'b', subject, policyId: 'flood', reason: 'r', evidenceCount: 1, windowSeconds: 60,
        startedAt: now, expiresAt: now + 3_600_000, preview: false, escalationLevel: 0, origin, httpStatus: 403, createdBy: null });
      // Addresses from 1.0.0.0 on, every other one: 1.0.0.0, 1.0.0.2, …
      const ip = (i) => { const n = 0x01000000 + 2 * i; return (n >>> 24) + '.' + ((n >>> 16) & 255) + '.' + ((n >>> 8) & 255) + '.' + (n & 255); };
      const cache = new BanCache({ maxBans: ${BANS} });
      for (let i = 0; i < ${BANS}; i++) cache.observe('ip:' + ip(i), ban('ip:' + ip(i)));
      const full = cache.size;
      cache.observe('ip:' + ip(${BANS}), ban('ip:' + ip(${BANS})));
      cache.observe('ip:' + ip(${BANS} + 1), ban('ip:' + ip(${BANS} + 1), 'manual'));
      const found = [0, 8_388_607, 8_388_608, ${BANS} - 1].map((i) => cache.address(parseIp(ip(i)), now)?.subject === 'ip:' + ip(i));
      const refusedFound = cache.address(parseIp(ip(${BANS})), now) !== undefined;
      const manualFound = cache.address(parseIp(ip(${BANS} + 1)), now)?.origin === 'manual';
      const unbanned = cache.address(parseIp('1.0.0.1'), now) !== undefined;
      globalThis.gc();
      const m = process.memoryUsage();
      console.log(JSON.stringify({ full, size: cache.size, refused: cache.refused, found, refusedFound, manualFound, unbanned,
        heap_used_mb: Math.round(m.heapUsed / 2 ** 20), array_buffers_mb: Math.round(m.arrayBuffers / 2 ** 20) }));
    `;
    const proc = spawn(process.execPath, [`--max-old-space-size=${HEAP_MB}`, '--expose-gc', '--input-type=module', '-e', child], {
      cwd: `${REPO_ROOT}services/enforcer`,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    proc.stdout.on('data', (d: Buffer) => (out += d.toString()));
    proc.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const ended = await exitOf(proc);
    expect(ended, `the ban cache's process ended with ${ended}: ${out.slice(-2_000)}`).toBe(0);
    const figures = JSON.parse(out.trim().split('\n').at(-1)!) as Record<string, unknown>;
    console.log(JSON.stringify({ test: 'ban-cache-10m', bans: BANS, ...figures }));
    expect(figures).toMatchObject({
      full: BANS,
      size: BANS + 1,
      refused: 1,
      found: [true, true, true, true],
      refusedFound: false,
      manualFound: true,
      unbanned: false,
    });
  }, 600_000);
});
