import { tryParseDuration } from '@banstream/core';
import { ProblemError } from '@banstream/platform';

/** `2025-01-01T00:00:00Z`, `1735689600000`, or `6h` (six hours before now) → ms since the epoch. */
export function parseInstant(text: string, nowMs: number, field: string): number {
  if (/^\d{10,}$/.test(text)) return Number(text);
  const ago = tryParseDuration(text);
  if (ago !== undefined) return nowMs - ago;
  const parsed = Date.parse(text);
  if (Number.isNaN(parsed) || !/^\d{4}-\d\d-\d\d/.test(text)) {
    throw new ProblemError('INVALID_REQUEST', `${field}: expected an ISO 8601 time, ms since the epoch, or a duration ago such as 6h`, [{ path: field, message: 'is not a time' }]);
  }
  return parsed;
}
