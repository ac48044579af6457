/**
 * Heap per ban an enforcer holds: a BanCache fed 1,000,000 IPv4 address bans the way
 * the enforcer's bans feed feeds it, each decoded from its Avro record (so each ban's
 * strings are its own, as when read off the bans topic, and its id and reason are as
 * long as the aggregator makes them). JS heap plus array buffers after a full
 * collection, before and after. `npm run capacity` sizes an enforcer's heap from it.
 */
import { banId } from '@banstream/core';
import { loadSchemaCatalog, SCHEMA_NAMES, type Ban } from '@banstream/schemas';
import { BanCache } from '../../services/enforcer/dist/cache/ban-cache.js';
import { heapBytes, note } from '../lib.js';

const BANS = 1_000_000;

const ipOf = (i: number) => `10.${(i >>> 16) & 255}.${(i >>> 8) & 255}.${i & 255}`;

export interface BanBytesFigures {
  /** Heap bytes per ban held: the BanCache and the decoded ban objects. */
  ban_cache_bytes_per_ban: number;
}

export function measureBanBytes(count = BANS): BanBytesFigures {
  note(`ban bytes: ${count} decoded bans into a BanCache`);
  const codec = loadSchemaCatalog().codec(SCHEMA_NAMES.ban);
  const now = Date.now();
  const before = heapBytes();
  const cache = new BanCache();
  for (let i = 0; i < count; i++) {
    const subject = `ip:${ipOf(i * 2)}`;
    const ban: Ban = {
      banId: banId('login-flood', subject, now),
      subject,
      policyId: 'login-flood',
      reason: `${21 + (i % 1000)} requests in 1m exceed the ban threshold of 20`,
      evidenceCount: 21 + (i % 1000),
      windowSeconds: 60,
      startedAt: now,
      expiresAt: now + 3_600_000,
      preview: false,
      escalationLevel: 0,
      origin: 'aggregator',
      httpStatus: 403,
      createdBy: null,
    };
    cache.observe(subject, codec.decode(codec.encode(ban)));
  }
  const after = heapBytes();
  if (cache.size !== count) throw new Error(`ban bytes: the cache holds ${cache.size} bans, not ${count}`);
  return { ban_cache_bytes_per_ban: Math.round((after - before) / count) };
}
