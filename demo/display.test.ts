import { describe, expect, it } from 'vitest';
import { frame, ratesBetween, render, seconds, type DisplayState } from './display.js';

const zero = { allowed: 0, denied: 0 };
const state = (over: Partial<DisplayState> = {}): DisplayState => ({
  now: 1_000_000,
  startedAt: 1_000_000 - 75_000,
  target: 'control http://127.0.0.1:8083',
  attacks: ['flood', 'botnet'],
  rates: { legit: { allowed: 2.5, denied: 0 }, flood: { allowed: 0, denied: 40 }, botnet: { allowed: 0.5, denied: 11.5 }, spike: zero },
  bans: [],
  alerts: [],
  status: 'Ctrl-C stops',
  ...over,
});

describe('demo display', () => {
  it('shows the rates per class, the bans with their delay after the attack start, and the alerts', () => {
    const text = render(
      state({
        bans: [
          { subject: 'ip:203.0.113.66', policyId: 'demo-flood', since: 1_000_000 - 12_000, expiresAt: 1_000_000 + 33_000, afterAttackMs: 3793, afterCrossingMs: 412 },
          { subject: 'cidr:198.51.100.0/24', policyId: 'demo-login-stuffing', since: 1_000_000 - 2_000, expiresAt: 1_000_000 + 43_000, afterAttackMs: 5061 },
          { subject: 'ip:192.0.2.9', policyId: 'manual', since: 1_000_000 - 90_000, expiresAt: 1_000_000 + 3_600_000 },
        ],
        alerts: [{ code: 'GB', state: 'fired', at: 1_000_000 - 5_000, currentRate: 1.8, baselineRate: 0.08, ratio: 18 }],
      }),
    );
    const lines = text.split('\n');
    expect(lines[0]).toBe('banstream demo  1m15s  control http://127.0.0.1:8083');
    expect(lines[1]).toBe('attacks now: flood, botnet');
    expect(text).toContain('single-IP flood           0.0     40.0');
    expect(text).toContain('botnet /24 (logins)       0.5     11.5');
    expect(text).toContain('ACTIVE BANS (3)');
    // Newest first.
    expect(lines.findIndex((l) => l.includes('cidr:198.51.100.0/24'))).toBeLessThan(lines.findIndex((l) => l.includes('ip:203.0.113.66')));
    expect(text).toMatch(/^  ip:203\.0\.113\.66\s+demo-flood\s+age 12s\s+lifts 33s\s+banned 3793 ms after attack start \(crossing \+412 ms\)$/m);
    expect(text).toMatch(/^  ip:192\.0\.2\.9\s+manual\s+age 1m30s\s+lifts 60m00s$/m);
    expect(text).toContain('fired    GB  1.80 req/s vs 0.08 usual (18.0x)  5s ago');
    expect(lines.at(-1)).toBe('Ctrl-C stops');
  });

  it('has the same number of lines whatever the bans and alerts are, up to its caps, and never overflows the width', () => {
    const many = Array.from({ length: 20 }, (_, i) => ({ subject: `ip:10.0.0.${i}`, policyId: 'p'.repeat(60), since: 1, expiresAt: 2 }));
    const text = render(state({ bans: many, attacks: [] }), 80);
    expect(text).toContain('… and 12 more');
    expect(text).toContain('attacks now: none');
    expect(text.split('\n').every((l) => l.length <= 80)).toBe(true);
    expect(render(state()).split('\n').length).toBeLessThan(text.split('\n').length);
  });

  it('redraws in place: cursor home, each line cleared to its end, the rest of the screen cleared', () => {
    expect(frame('a\nb')).toBe('\x1b[Ha\x1b[K\nb\x1b[K\x1b[J');
  });

  it('turns counter snapshots into rates', () => {
    const before = { legit: { allowed: 10, denied: 0 }, flood: { allowed: 0, denied: 100 }, botnet: zero, spike: zero };
    const after = { legit: { allowed: 15, denied: 0 }, flood: { allowed: 0, denied: 180 }, botnet: zero, spike: zero };
    expect(ratesBetween(before, after, 2_000)).toEqual({ legit: { allowed: 2.5, denied: 0 }, flood: { allowed: 0, denied: 40 }, botnet: zero, spike: zero });
    expect(seconds(61_400)).toBe('1m01s');
  });
});
