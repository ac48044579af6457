import { tryParseDuration } from '@banstream/core';
import { CliError, EXIT } from '../exit-codes.js';

/** A time option: a duration ago (`24h`, `7d`) or an ISO 8601 time; undefined when not given. */
export function timeArg(value: string | undefined, name: string, now: number): number | undefined {
  if (value === undefined) return undefined;
  const ago = tryParseDuration(value);
  if (ago !== undefined) return now - ago;
  const at = /^\d{4}-\d{2}-\d{2}/.test(value) ? Date.parse(value) : Number.NaN;
  if (Number.isNaN(at)) throw new CliError(`--${name} takes a duration ago (24h, 7d) or an ISO time (2026-03-14T09:30:00Z), got ${JSON.stringify(value)}`, EXIT.usage);
  return at;
}
