import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCHEMA_NAMES, type AllowEntry, type AuditRecord, type Ban } from '@banstream/schemas';
import { testInfra, waitUntil } from './support/infra.js';
import { catalog, decodeBan, TopicTail } from './support/aggregator.js';
import { connectTestBroker, type TestBroker } from './support/broker.js';
import { decodeAudit, startControl, testTokens, type Control } from './support/control.js';

/**
 * Guard rails of the control API, as a process against the real broker: a manual ban
 * or allowlist entry on a network wider than the minimum prefix (defaults /8 and /32)
 * needs `force`, and the audit says it was forced; a manual ban has a maximum length.
 */
describe('control API guard rails', () => {
  const { kafkaBrokers } = testInfra();
  const tokens = testTokens();
  let broker: TestBroker;
  let control: Control;
  let audit: TopicTail<AuditRecord>;
  let bans: TopicTail<Ban>;
  let allowlist: TopicTail<AllowEntry>;
  const operator = { token: tokens.operator };

  beforeAll(async () => {
    broker = await connectTestBroker(kafkaBrokers);
    control = await startControl({ ...broker.env, CONTROL_TOKENS: tokens.entries, CONTROL_RATE_LIMIT: '100000' });
    const { kafka, topics } = broker;
    audit = await new TopicTail(kafka, topics.name('audit'), decodeAudit).start();
    bans = await new TopicTail(kafka, topics.name('bans'), decodeBan).start();
    allowlist = await new TopicTail(kafka, topics.name('allowlist'), (b) => catalog.codec(SCHEMA_NAMES.allowEntry).decode(b)).start();
  }, 90_000);

  afterAll(async () => {
    await control?.stop();
    await Promise.all([audit?.stop(), bans?.stop(), allowlist?.stop()]);
    await broker?.close();
  });

  const WIDE = [
    { typed: '0.0.0.0/0', subject: 'cidr:0.0.0.0/0', limit: '/8 an IPv4', variable: 'CONTROL_MIN_PREFIX_V4' },
    { typed: '::/0', subject: 'cidr:::/0', limit: '/32 an IPv6', variable: 'CONTROL_MIN_PREFIX_V6' },
    { typed: '::ffff:0:0/96', subject: 'cidr:0.0.0.0/0', limit: '/8 an IPv4', variable: 'CONTROL_MIN_PREFIX_V4' },
  ];

  it('refuses 0.0.0.0/0, ::/0 and the IPv4-mapped whole internet as a ban and as an allowlist entry without force', async () => {
    for (const w of WIDE) {
      const ban = await control.call('POST', '/v1/bans', { ...operator, body: { subject: w.typed, duration: '1h', reason: 'typo' } });
      expect(ban.status, w.typed).toBe(400);
      expect(ban.body.code).toBe('NETWORK_TOO_WIDE');
      expect(ban.body.errors).toEqual([{ path: 'subject', message: `${w.subject.slice(5)} is wider than the ${w.limit} ban may cover without force (${w.variable})` }]);
      const allow = await control.call('POST', '/v1/allowlist', { ...operator, body: { entry: w.typed, reason: 'typo' } });
      expect(allow.status, w.typed).toBe(400);
      expect(allow.body.code).toBe('NETWORK_TOO_WIDE');
      expect(allow.body.errors).toEqual([{ path: 'entry', message: `${w.subject.slice(5)} is wider than the ${w.limit} allowlist entry may cover without force (${w.variable})` }]);
    }
    expect((await control.call('GET', '/v1/bans', operator)).body.bans).toEqual([]);
    expect((await control.call('GET', '/v1/allowlist', operator)).body.entries).toEqual([]);
  });

  it('refuses a manual ban on a subject only a response carries (status, status_class): it could never be applied', async () => {
    for (const typed of ['status:401', 'status_class:4xx', 'path:/login|status:401']) {
      const ban = await control.call('POST', '/v1/bans', { ...operator, body: { subject: typed, duration: '1h', reason: 'never enforced' } });
      expect(ban.status, typed).toBe(400);
      expect(ban.body.code).toBe('SUBJECT_INVALID');
      expect(ban.body.errors[0].path).toBe('subject');
      expect(ban.body.errors[0].message).toMatch(/^status(_class)? cannot be banned: the enforcer checks a request before its response/);
    }
    expect((await control.call('GET', '/v1/bans', operator)).body.bans).toEqual([]);
  });

  it('refuses a manual ban longer than the cap (30d by default), even with force', async () => {
    for (const body of [{ duration: '31d' }, { duration: '31d', force: true }, { duration: '99999999999999999999d' }]) {
      const res = await control.call('POST', '/v1/bans', { ...operator, body: { subject: '203.0.113.7', reason: 'long', ...body } });
      expect(res.status, body.duration).toBe(400);
      expect(res.body).toMatchObject({ code: 'BAN_TOO_LONG', errors: [{ path: 'duration', message: `${body.duration} is longer than the 30d a manual ban may last (CONTROL_MAX_BAN_DURATION)` }] });
    }
    const ok = await control.call('POST', '/v1/bans', { ...operator, body: { subject: '203.0.113.7', duration: '30d', reason: 'at the cap' } });
    expect(ok.status).toBe(201);
    expect(ok.body.expiresAt - ok.body.startedAt).toBe(30 * 86_400_000);
  });

  it('accepts them with force, on the topics, and audits each as forced with the guard it overrode', async () => {
    const ban = await control.call('POST', '/v1/bans', { ...operator, body: { subject: '0.0.0.0/0', duration: '1m', reason: 'drill', force: true } });
    expect(ban.status).toBe(201);
    expect(ban.body.subject).toBe('cidr:0.0.0.0/0');
    const allow = await control.call('POST', '/v1/allowlist', { ...operator, body: { entry: '::/0', reason: 'lab', ttl: '1h', force: true } });
    expect(allow.status).toBe(201);
    expect(allow.body.entry).toBe('cidr:::/0');
    await waitUntil(() => bans.latest().has('cidr:0.0.0.0/0') && allowlist.latest().has('cidr:::/0'), 'the forced ban and entry on their topics');

    const records = await waitUntil(() => (audit.records.length >= 3 ? audit.records.map((r) => r.value!) : undefined), 'three audit records');
    // Nothing refused reached the audit: the operator's changes are, in order, the capped ban and the two forced ones.
    expect(records.map((r) => `${r.action} ${r.target}`)).toEqual(['ban.add ip:203.0.113.7', 'ban.add cidr:0.0.0.0/0', 'allowlist.add cidr:::/0']);
    expect(records.map((r) => r.forced)).toEqual([
      null,
      '0.0.0.0/0 is wider than the /8 an IPv4 ban may cover without force (CONTROL_MIN_PREFIX_V4)',
      '::/0 is wider than the /32 an IPv6 allowlist entry may cover without force (CONTROL_MIN_PREFIX_V6)',
    ]);
    for (const r of records) expect(r.actor).toBe('operator-user');
  });

  it('takes its limits from CONTROL_MIN_PREFIX_V4/V6 and CONTROL_MAX_BAN_DURATION', async () => {
    const strict = await startControl({ ...broker.env, CONTROL_TOKENS: tokens.entries, CONTROL_MIN_PREFIX_V4: '24', CONTROL_MIN_PREFIX_V6: '48', CONTROL_MAX_BAN_DURATION: '2h' });
    try {
      const v4 = await strict.call('POST', '/v1/bans', { ...operator, body: { subject: '198.51.0.0/16', duration: '1h', reason: 'x' } });
      expect(v4.body.errors).toEqual([{ path: 'subject', message: '198.51.0.0/16 is wider than the /24 an IPv4 ban may cover without force (CONTROL_MIN_PREFIX_V4)' }]);
      const v6 = await strict.call('POST', '/v1/allowlist', { ...operator, body: { entry: '2001:db8::/40', reason: 'x' } });
      expect(v6.body.errors).toEqual([{ path: 'entry', message: '2001:db8::/40 is wider than the /48 an IPv6 allowlist entry may cover without force (CONTROL_MIN_PREFIX_V6)' }]);
      const long = await strict.call('POST', '/v1/bans', { ...operator, body: { subject: '198.51.100.0/24', duration: '3h', reason: 'x' } });
      expect(long.body.errors).toEqual([{ path: 'duration', message: '3h is longer than the 2h a manual ban may last (CONTROL_MAX_BAN_DURATION)' }]);
    } finally {
      await strict.stop();
    }
  }, 180_000);

  it('refuses a manual ban on a subject that names no client (method, host, country, path) without force, and audits it forced with force', async () => {
    for (const typed of ['method:GET', 'country:FR', 'host:shop.example', 'path:/', 'country:FR|method:POST']) {
      const ban = await control.call('POST', '/v1/bans', { ...operator, body: { subject: typed, duration: '1m', reason: 'typo' } });
      expect(ban.status, typed).toBe(400);
      expect(ban.body.code).toBe('SUBJECT_TOO_BROAD');
      expect(ban.body.errors[0]).toEqual({
        path: 'subject',
        message: expect.stringMatching(/names no client \(no ip, cidr, user, apikey, header or cookie part\): it refuses every request that carries it, from everyone$/),
      });
    }
    // A client part makes it narrow: the user, on one path.
    const narrow = await control.call('POST', '/v1/bans', { ...operator, body: { subject: 'user:42|path:/login', duration: '1m', reason: 'stuffing' } });
    expect(narrow.status).toBe(201);
    const forced = await control.call('POST', '/v1/bans', { ...operator, body: { subject: 'country:FR', duration: '1m', reason: 'drill', force: true } });
    expect(forced.status).toBe(201);
    const record = await waitUntil(() => audit.records.map((r) => r.value!).find((r) => r.target === 'country:FR'), 'the forced broad ban in the audit');
    expect(record.forced).toBe('country:FR names no client (no ip, cidr, user, apikey, header or cookie part): it refuses every request that carries it, from everyone');
    expect(audit.records.map((r) => r.value!).find((r) => r.target === narrow.body.subject)?.forced).toBeNull();
  });
});
