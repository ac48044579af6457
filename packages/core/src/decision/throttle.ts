/**
 * Cloud Armor `throttle` from a shared count: when a subject's rate is above its
 * threshold, deny the excess share, so the admitted rate stays near the threshold
 * instead of collapsing to zero (which a ban would do) or staying at the attack rate.
 */
export function throttleDenyRatio(count: number, threshold: number): number {
  if (count <= threshold || count <= 0) return 0;
  return 1 - threshold / count;
}

/** Seconds until enough of the window has slid for the subject to be under its threshold again. */
export function throttleRetryAfterSeconds(count: number, threshold: number, windowMs: number): number {
  if (count <= threshold) return 0;
  // The window forgets ~count/windowMs per ms if the rate stops: time to shed the excess.
  return Math.max(1, Math.ceil((((count - threshold) / count) * windowMs) / 1000));
}
