import { describe, expect, it } from 'vitest';
import { banDetails, type BanView } from './bans.js';

const T0 = Date.UTC(2026, 2, 14, 9, 30);
const ban: BanView = {
  subject: 'ip:203.0.113.7',
  policyId: 'login-flood',
  reason: '121 requests in 1m exceed the ban threshold of 120',
  evidenceCount: 121,
  windowSeconds: 60,
  startedAt: T0,
  expiresAt: T0 + 600_000,
  preview: false,
  origin: 'aggregator',
  httpStatus: 429,
  createdBy: null,
  escalationLevel: 0,
  evidence: {
    firstEventAt: T0 - 58_000,
    lastEventAt: T0,
    sampledEvents: 61,
    paths: [{ value: '/login', count: 61 }],
    methods: [{ value: 'POST', count: 61 }],
    statuses: [
      { value: '401', count: 60 },
      { value: '200', count: 1 },
    ],
    userAgents: [{ value: 'python-requests/2.31', count: 61 }],
    edges: [],
  },
};

describe('bans show', () => {
  it('prints the window count, the first and last events and the top values of the evidence', () => {
    const text = banDetails(ban, T0 + 60_000);
    expect(text).toContain('window       121 requests in 60 s at the crossing');
    expect(text).toContain('events       first 2026-03-14T09:29:02Z, last 2026-03-14T09:30:00Z (in the window)');
    expect(text).toContain('statuses     "401" ×60, "200" ×1');
    expect(text).toContain('user agents  "python-requests/2.31" ×61');
    expect(text).toContain('expires      2026-03-14T09:40:00Z (in 9m)');
    expect(text).not.toContain('edges');
  });

  it('prints a manual ban without evidence lines', () => {
    const text = banDetails({ ...ban, origin: 'manual', createdBy: 'alice', windowSeconds: 0, evidenceCount: 0, evidence: null }, T0);
    expect(text).toContain('origin   manual (alice)');
    expect(text).not.toMatch(/window|sampled|paths/);
  });
});
