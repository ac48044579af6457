import type { GeoAlert } from '@banstream/schemas';

/**
 * The alerts still open: per scope and code, the latest alert is `fired`. `recent`
 * comes most recent first (ControlState.alerts).
 */
export function openAlerts(recent: readonly GeoAlert[], limit: number): GeoAlert[] {
  const seen = new Set<string>();
  const open: GeoAlert[] = [];
  for (const a of recent) {
    const key = `${a.scope}:${a.code}`;
    if (seen.has(key)) continue;
    seen.add(key);
    if (a.state === 'fired') open.push(a);
    if (open.length >= limit) break;
  }
  return open;
}
