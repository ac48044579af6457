import { tryParseDuration } from '@banstream/core';

/** The default of CONTROL_MAX_BAN_DURATION: a manual ban longer than this is a policy's job. */
export const DEFAULT_MAX_BAN_DURATION = '30d';

/** The longest manual ban, as configured: its text for messages and its length. */
export interface BanDurationCap {
  readonly text: string;
  readonly ms: number;
}

/**
 * Why a manual ban's duration is refused, or undefined when it is within the cap.
 * Force does not lift the cap: a longer ban takes a configuration change, not a
 * flag one request can carry.
 */
export function banDurationProblem(duration: string, cap: BanDurationCap): string | undefined {
  const ms = tryParseDuration(duration);
  // A duration too long for a safe integer is over any cap too.
  if (ms !== undefined && ms <= cap.ms) return undefined;
  return `${duration} is longer than the ${cap.text} a manual ban may last (CONTROL_MAX_BAN_DURATION)`;
}
