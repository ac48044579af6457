import { SCHEMA_NAMES, type Ban } from '@banstream/schemas';
import { catalog } from './aggregator.js';

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
export const encodeBan = (ban: Ban): Buffer => catalog.codec(SCHEMA_NAMES.ban).encode(ban);
