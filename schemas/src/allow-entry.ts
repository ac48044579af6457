import type { AllowlistEntry } from '@banstream/core';
import type { AllowEntry } from './types.js';

/** A record of the allowlist topic as the core Allowlist takes it (a null expiry: until removed). */
export function allowlistEntry(record: AllowEntry): AllowlistEntry {
  return { entry: record.entry, reason: record.reason, addedBy: record.addedBy, ...(record.expiresAt === null ? {} : { expiresAt: record.expiresAt }) };
}
