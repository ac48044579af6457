import type { BanDurationCap } from './ban-duration.js';
import type { MinPrefix } from '@banstream/api';

export { DEFAULT_MIN_PREFIX, describeWide, MIN_PREFIX_VARIABLE, wideNetwork, type MinPrefix, type WideNetwork } from '@banstream/api';
export { banDurationProblem, DEFAULT_MAX_BAN_DURATION, type BanDurationCap } from './ban-duration.js';
export { broadSubjectReason } from './broad-subject.js';

/** What the control API refuses without force (wide networks) or at all (long manual bans). */
export interface GuardRails {
  readonly minPrefix: MinPrefix;
  readonly maxBan: BanDurationCap;
}
