import { describeWide, wideNetwork, type MinPrefix } from '../guards/index.js';
import { ApiError } from '../http/problem.js';

/**
 * The guard a change overrides with `force`, as the audit records it, or null when
 * it needs none. Without force, a network wider than the limits is refused with
 * NETWORK_TOO_WIDE naming the field and the limit.
 */
export function forcedOver(subject: string, limits: MinPrefix, force: boolean, at: { what: string; field: string }): string | null {
  const wide = wideNetwork(subject, limits);
  if (wide === undefined) return null;
  const reason = describeWide(wide, at.what);
  if (!force) throw new ApiError('NETWORK_TOO_WIDE', `${at.field}: ${reason}; send force: true to place it anyway`, [{ path: at.field, message: reason }]);
  return reason;
}
