import { ProblemError } from '@banstream/platform';
import { broadSubjectReason, describeWide, wideNetwork, type MinPrefix } from '../guards/index.js';

/**
 * The guard a change overrides with `force`, as the audit records it, or null when
 * it needs none. Without force, a network wider than the limits is refused with
 * NETWORK_TOO_WIDE naming the field and the limit.
 */
export function forcedOver(subject: string, limits: MinPrefix, force: boolean, at: { what: string; field: string }): string | null {
  const wide = wideNetwork(subject, limits);
  if (wide === undefined) return null;
  const reason = describeWide(wide, at.what);
  if (!force) throw new ProblemError('NETWORK_TOO_WIDE', `${at.field}: ${reason}; send force: true to place it anyway`, [{ path: at.field, message: reason }]);
  return reason;
}

/**
 * The guard a manual ban overrides with `force`: a network too wide (forcedOver), or a
 * subject that names no client at all (SUBJECT_TOO_BROAD: `method:GET`, `country:FR`).
 */
export function banForcedOver(subject: string, limits: MinPrefix, force: boolean): string | null {
  const wide = forcedOver(subject, limits, force, { what: 'ban', field: 'subject' });
  if (wide !== null) return wide;
  const broad = broadSubjectReason(subject);
  if (broad === undefined) return null;
  if (!force) throw new ProblemError('SUBJECT_TOO_BROAD', `subject: ${broad}; send force: true to place it anyway`, [{ path: 'subject', message: broad }]);
  return broad;
}
