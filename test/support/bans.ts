import { loadSchemaCatalog, SCHEMA_NAMES, type Ban } from '@banstream/schemas';

// The catalog of its own, not aggregator.ts's: benchmarks import this file outside vitest.
const banCodec = loadSchemaCatalog().codec(SCHEMA_NAMES.ban);

/** A manual 403 ban of `subject` by `tests`, from now for ten minutes; the given fields over it. */
export function manualBan(subject: string, fields: Partial<Ban> = {}): Ban {
  const now = Date.now();
  return {
    banId: `manual-${subject}`,
    subject,
    policyId: 'manual',
    reason: 'test',
    evidenceCount: 0,
    windowSeconds: 0,
    startedAt: now,
    expiresAt: now + 600_000,
    preview: false,
    escalationLevel: 0,
    origin: 'manual',
    httpStatus: 403,
    createdBy: 'tests',
    ...fields,
  };
}

/** The bans topic's record for a ban. */
export const encodeBan = (ban: Ban): Buffer => banCodec.encode(ban);
