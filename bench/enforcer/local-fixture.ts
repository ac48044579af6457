/**
 * The data of the enforcer's local-check benchmark (local.ts), apart from any build's
 * code, so bench/compare/enforcer-local.mjs gives every build the same bans, policies
 * and addresses.
 */
import type { Ban, PolicyRecord } from '@banstream/schemas';

export const ipOf = (i: number) => `10.${(i >>> 16) & 255}.${(i >>> 8) & 255}.${i & 255}`;

/** The i-th ban: on every other address, `ip:${ipOf(i * 2)}`, live for an hour from `now`. */
export function benchBan(i: number, now: number): Ban {
  return {
    banId: `b${i}`,
    subject: `ip:${ipOf(i * 2)}`,
    policyId: 'login-flood',
    reason: 'bench',
    evidenceCount: 100,
    windowSeconds: 60,
    startedAt: now,
    expiresAt: now + 3_600_000,
    preview: false,
    escalationLevel: 0,
    origin: 'aggregator',
    httpStatus: 403,
    createdBy: null,
  };
}

function policy(id: string, spec: Record<string, unknown>): PolicyRecord {
  return { id, version: 1, description: '', owner: 'bench', mode: 'enforce', enabled: true, definition: JSON.stringify(spec), updatedBy: 'bench', updatedAt: 0 };
}

/** A ban policy on /login, a throttle on /api/. */
export const BENCH_POLICIES: readonly PolicyRecord[] = [
  policy('login-flood', { key: ['ip'], match: { paths: ['/login'] }, threshold: { count: 20, interval: '1m' }, action: { type: 'ban', banDuration: '1h' } }),
  policy('api', { key: ['ip'], match: { pathPrefixes: ['/api/'] }, threshold: { count: 100, interval: '1m' }, action: { type: 'throttle' } }),
];
