import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCHEMA_NAMES, type Ban } from '@banstream/schemas';
import { testInfra, waitUntil } from './support/infra.js';
import { produceOrFail } from './support/kafka.js';
import { catalog } from './support/aggregator.js';
import { connectTestBroker, type TestBroker } from './support/broker.js';
import { startControl, testTokens, type Control } from './support/control.js';

interface HistoryPage {
  subject: string;
  entries: { action: string; at: number; actor: string | null; ban: Ban }[];
  next: string | null;
  scanned: number;
}

/** Ban evidence, ban history and the audit query through the control API, against the real broker. */
describe('control: evidence, history and audit', () => {
  const { kafkaBrokers } = testInfra();
  const tokens = testTokens();
  let broker: TestBroker;
  let control: Control;
  const started = Date.now();
  const viewer = () => ({ token: tokens.viewer });
  const operator = () => ({ token: tokens.operator });

  beforeAll(async () => {
    broker = await connectTestBroker(kafkaBrokers);
    control = await startControl({ ...broker.env, CONTROL_TOKENS: tokens.entries, CONTROL_RATE_LIMIT: '100000', CONTROL_BAN_SWEEP_MS: '200' });
  }, 90_000);

  afterAll(async () => {
    await control?.stop();
    await broker?.close();
  });

  const history = async (subject: string, query = ''): Promise<HistoryPage> => {
    const res = await control.call('GET', `/v1/bans/${encodeURIComponent(subject)}/history${query}`, viewer());
    expect(res.status).toBe(200);
    return res.body as HistoryPage;
  };

  it("serves an aggregator ban's evidence on GET /v1/bans/{subject}", async () => {
    const now = Date.now();
    const ban: Ban = {
      banId: 'b-evidence',
      subject: 'ip:198.51.100.40',
      policyId: 'login-flood',
      reason: '121 requests in 1m exceed the ban threshold of 120',
      evidenceCount: 121,
      windowSeconds: 60,
      startedAt: now,
      expiresAt: now + 3_600_000,
      preview: false,
      escalationLevel: 0,
      origin: 'aggregator',
      httpStatus: 429,
      createdBy: null,
      evidence: {
        firstEventAt: now - 59_000,
        lastEventAt: now,
        sampledEvents: 61,
        paths: [{ value: '/login', count: 61 }],
        methods: [{ value: 'POST', count: 61 }],
        statuses: [{ value: '401', count: 61 }],
        userAgents: [{ value: 'evil-bot/1', count: 61 }],
        edges: [{ value: 'edge-a', count: 61 }],
      },
    };
    await produceOrFail(broker.producer, broker.topics.name('bans'), [{ key: ban.subject, value: catalog.codec(SCHEMA_NAMES.ban).encode(ban) }]);
    const got = await waitUntil(async () => {
      const res = await control.call('GET', `/v1/bans/${ban.subject}`, viewer());
      return res.status === 200 ? res.body : undefined;
    }, 'the ban through the API');
    expect(got.evidence).toEqual(ban.evidence);
  });

  it('records a manual ban, its lift, a second ban and its expiry in the history, and nothing of other subjects', async () => {
    const subject = 'ip:203.0.113.77';
    expect((await control.call('POST', '/v1/bans', { ...operator(), body: { subject: '203.0.113.77', duration: '1h', reason: 'stuffing' } })).status).toBe(201);
    expect((await control.call('POST', '/v1/bans', { ...operator(), body: { subject: '203.0.113.78', duration: '1h', reason: 'a neighbour' } })).status).toBe(201);
    expect((await control.call('DELETE', `/v1/bans/${subject}`, operator())).status).toBe(200);
    expect((await control.call('POST', '/v1/bans', { ...operator(), body: { subject: '203.0.113.77', duration: '1s', reason: 'again' } })).status).toBe(201);
    // The sweep (every 200 ms) lifts the manual ban once its second is over.
    const page = await waitUntil(
      async () => {
        const p = await history(subject);
        return p.entries.length === 4 ? p : undefined;
      },
      'four history entries',
      20_000,
    );
    expect(page.entries.map((e) => [e.action, e.actor, e.ban.reason])).toEqual([
      ['ban', 'operator-user', 'stuffing'],
      ['lift', 'operator-user', 'stuffing'],
      ['ban', 'operator-user', 'again'],
      ['expire', null, 'again'],
    ]);
    expect(page.next).toBeNull();
    expect(page.entries[3]!.at).toBeGreaterThanOrEqual(page.entries[2]!.ban.expiresAt);
  });

  it("shows an aggregator's history entry sent twice (again by its replay after a crash) once", async () => {
    const now = Date.now();
    const subject = 'ip:198.51.100.41';
    const ban: Ban = {
      banId: 'b-twice',
      subject,
      policyId: 'login-flood',
      reason: 'r',
      evidenceCount: 121,
      windowSeconds: 60,
      startedAt: now,
      expiresAt: now + 3_600_000,
      preview: false,
      escalationLevel: 0,
      origin: 'aggregator',
      httpStatus: 429,
      createdBy: null,
      evidence: null,
    };
    const codec = catalog.codec(SCHEMA_NAMES.banHistory);
    const entry = (b: Ban) => ({ key: subject, value: codec.encode({ subject, action: 'ban', at: b.startedAt, actor: null, ban: b }) });
    const later = { ...ban, banId: 'b-later', startedAt: now + 1 };
    await produceOrFail(broker.producer, broker.topics.name('ban-history'), [entry(ban), entry(ban), entry(later)]);
    const page = await waitUntil(async () => {
      const p = await history(subject, `?since=${now - 1000}`);
      return p.entries.length >= 2 ? p : undefined;
    }, 'the history entries');
    expect(page.entries.map((e) => e.ban.banId)).toEqual(['b-twice', 'b-later']);
  });

  it('pages a history with limit and after, and bounds it by since and until', async () => {
    const subject = 'ip:203.0.113.77';
    const first = await history(subject, '?limit=1');
    expect(first.entries.map((e) => e.action)).toEqual(['ban']);
    expect(first.next).toMatch(/^\d+:\d+$/);
    const second = await history(subject, `?limit=2&after=${first.next}`);
    expect(second.entries.map((e) => e.action)).toEqual(['lift', 'ban']);
    const all = await history(subject);
    const expiredAt = all.entries[3]!.at;
    expect((await history(subject, `?since=${expiredAt}`)).entries.map((e) => e.action)).toEqual(['expire']);
    expect((await history(subject, `?until=${started}`)).entries).toEqual([]);
    const bad = await control.call('GET', `/v1/bans/${subject}/history?after=nonsense`, viewer());
    expect(bad.status).toBe(400);
  });

  it('searches the audit trail by actor, action, target and time', async () => {
    const search = async (query: string) => {
      const res = await control.call('GET', `/v1/audit${query}`, viewer());
      expect(res.status).toBe(200);
      return res.body as { records: { actor: string; action: string; target: string; at: number }[]; next: string | null };
    };
    const bans = await search('?actor=operator-user&action=ban');
    expect(bans.records.map((r) => [r.action, r.target])).toEqual([
      ['ban.add', 'ip:203.0.113.77'],
      ['ban.add', 'ip:203.0.113.78'],
      ['ban.lift', 'ip:203.0.113.77'],
      ['ban.add', 'ip:203.0.113.77'],
    ]);
    expect((await search('?action=ban.lift')).records.map((r) => [r.actor, r.target])).toEqual([
      ['operator-user', 'ip:203.0.113.77'],
      ['banstream-control', 'ip:203.0.113.77'],
    ]);
    expect((await search('?target=ip:203.0.113.78')).records.map((r) => r.action)).toEqual(['ban.add']);
    expect((await search('?actor=nobody')).records).toEqual([]);
    const second = bans.records[1]!.at;
    expect((await search(`?actor=operator-user&since=${second}&until=${bans.records[3]!.at}`)).records.map((r) => r.target)).toEqual(['ip:203.0.113.78', 'ip:203.0.113.77']);
    const paged = await search('?actor=operator-user&limit=3');
    expect(paged.records).toHaveLength(3);
    expect((await search(`?actor=operator-user&after=${paged.next}`)).records.map((r) => r.action)).toEqual(['ban.add']);
  });
});
