import { describe, expect, it } from 'vitest';
import type { AllowEntry, Ban } from '@banstream/schemas';
import { DEFAULT_MIN_PREFIX } from '../guards/index.js';
import { parseFeed } from './parse.js';
import { planRefresh } from './plan.js';

const NOW = 1_700_000_000_000;
const ban = (subject: string, origin: string, expiresAt = NOW + 86_400_000): Ban => ({
  banId: subject,
  subject,
  policyId: origin,
  reason: 'r',
  evidenceCount: 0,
  windowSeconds: 0,
  startedAt: NOW - 1000,
  expiresAt,
  preview: false,
  escalationLevel: 0,
  origin,
  httpStatus: 403,
  createdBy: null,
});
const allow = (entry: string, expiresAt: number | null = null): AllowEntry => ({ entry, reason: 'ours', addedBy: 'a', addedAt: 0, expiresAt });
const entries = (...lines: string[]) => parseFeed(lines.join('\n'), { kind: 'netset' }, { maxLines: 100, maxEntries: 100 }).entries;
const plan = (list: ReturnType<typeof entries>, bans: Ban[], allowlist: AllowEntry[] = [], wideAllowed = false) =>
  planRefresh({ origin: 'feed:x', entries: list, bans: new Map(bans.map((b) => [b.subject, b])), allowlist, minPrefix: DEFAULT_MIN_PREFIX, wideAllowed, now: NOW, renewWithin: 7_200_000 });

describe('planRefresh', () => {
  it('adds new entries, lifts those no longer listed, renews those about to run out, leaves the rest', () => {
    const p = plan(entries('192.0.2.1', '192.0.2.2', '192.0.2.3'), [ban('ip:192.0.2.2', 'feed:x'), ban('ip:192.0.2.3', 'feed:x', NOW + 60_000), ban('ip:192.0.2.9', 'feed:x')]);
    expect(p).toMatchObject({ add: ['ip:192.0.2.1'], renew: ['ip:192.0.2.3'], held: 3 });
    expect(p.lift.map((b) => b.subject)).toEqual(['ip:192.0.2.9']);
  });

  it('never bans what the live allowlist covers whole, and lifts a feed ban the allowlist now covers', () => {
    const p = plan(
      entries('198.51.100.7', '198.51.100.0/25', '198.51.100.0/23', '203.0.113.5', '192.0.2.1'),
      [ban('ip:192.0.2.1', 'feed:x')],
      [allow('cidr:198.51.100.0/24'), allow('ip:203.0.113.5', NOW - 1), allow('ip:192.0.2.1')],
    );
    // The /23 is wider than the allowed /24: banned, the enforcer's allowlist still wins inside it.
    expect(p.add).toEqual(['cidr:198.51.100.0/23', 'ip:203.0.113.5']);
    expect(p.skipped.allowlisted).toBe(3);
    expect(p.lift.map((b) => b.subject)).toEqual(['ip:192.0.2.1']);
  });

  it('leaves a subject banned by a policy, a person or another feed to that ban, but takes over an expired one', () => {
    const p = plan(entries('192.0.2.1', '192.0.2.2', '192.0.2.3'), [ban('ip:192.0.2.1', 'aggregator'), ban('ip:192.0.2.2', 'feed:other'), ban('ip:192.0.2.3', 'manual', NOW - 1)]);
    expect(p.add).toEqual(['ip:192.0.2.3']);
    expect(p.skipped.bannedOtherwise).toBe(2);
    expect(p.held).toBe(0);
  });

  it('skips entries wider than the guard rails unless the feed was forced', () => {
    const list = entries('0.0.0.0/0', '0.0.0.0/1', '10.0.0.0/8', '::/0');
    expect(plan(list, [])).toMatchObject({ add: ['cidr:10.0.0.0/8'], skipped: { tooWide: 3 }, tooWideShown: ['cidr:0.0.0.0/0', 'cidr:0.0.0.0/1', 'cidr:::/0'] });
    expect(plan(list, [], [], true).add).toHaveLength(4);
  });
});
