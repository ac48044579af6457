import { describe, expect, it } from 'vitest';
import { banWithoutEvidence } from './ban-without-evidence.js';
import { loadSchemaCatalog } from './catalog-files.js';
import { parsingCanonicalForm } from './fingerprint.js';
import { encodeSingleObject } from './single-object.js';
import { SCHEMA_NAMES, type RequestEvent, type SchemaName, type SchemaTypes } from './types.js';

const catalog = loadSchemaCatalog();
const T0 = Date.UTC(2025, 2, 14, 9, 30); // a fixed instant; tests never read the clock

function requestEvent(i: number): RequestEvent {
  return {
    eventId: `01HQ${String(i).padStart(22, '0')}`,
    timestamp: T0 + i,
    ip: `203.0.113.${i % 256}`,
    country: 'FR',
    region: 'FR-IDF',
    asn: 4_200_000_000,
    method: 'POST',
    host: 'api.example.com',
    path: `/v1/login/${i}`,
    route: '/v1/login/:attempt',
    status: i % 10 === 0 ? 429 : 200,
    userId: i % 3 === 0 ? null : `user-${i % 17}`,
    apiKeyHash: null,
    headers: { 'user-agent': 'curl/8.5.0', 'accept-language': 'fr-FR' },
    edgeId: 'edge-eu-west-1a-7',
    latencyMs: 12.75,
    cost: i % 4 === 0 ? 5 : 1,
  };
}

const samples: { [N in SchemaName]: SchemaTypes[N] } = {
  'request-event': requestEvent(1),
  'request-event-batch': { events: [requestEvent(1), { ...requestEvent(2), country: null, region: null, asn: null, headers: {} }] },
  ban: {
    banId: 'ban-3f9a1c07e2d4b6a8',
    subject: 'ip:203.0.113.7',
    policyId: 'login-failures-per-ip',
    reason: '1187.4 requests in 60 s > 1000',
    evidenceCount: 1187.4,
    windowSeconds: 60,
    startedAt: T0,
    expiresAt: T0 + 600_000,
    preview: false,
    escalationLevel: 2,
    origin: 'aggregator',
    httpStatus: 429,
    createdBy: null,
    evidence: {
      firstEventAt: T0 - 59_000,
      lastEventAt: T0,
      sampledEvents: 1187,
      paths: [
        { value: '/login', count: 1100 },
        { value: '/', count: 87 },
      ],
      methods: [{ value: 'POST', count: 1187 }],
      statuses: [
        { value: '401', count: 1150 },
        { value: '200', count: 37 },
      ],
      userAgents: [{ value: 'python-requests/2.31', count: 1187 }],
      edges: [{ value: 'edge-eu-west-1a-7', count: 1187 }],
    },
  },
  'ban-history': {
    subject: 'ip:203.0.113.7',
    action: 'lift',
    at: T0 + 60_000,
    actor: 'alice',
    ban: {
      banId: 'ban-manual-1',
      subject: 'ip:203.0.113.7',
      policyId: 'manual',
      reason: 'credential stuffing',
      evidenceCount: 0,
      windowSeconds: 0,
      startedAt: T0,
      expiresAt: T0 + 3_600_000,
      preview: false,
      escalationLevel: 0,
      origin: 'manual',
      httpStatus: 403,
      createdBy: 'alice',
      evidence: null,
    },
  },
  'window-count': {
    policyId: 'signups-per-country',
    subject: 'country:FR',
    kind: 'country',
    count: 5321.5,
    windowSeconds: 300,
    threshold: 5000,
    observedAt: T0,
    final: false,
  },
  'geo-alert': {
    alertId: 'geo-FR-IDF-1710408600000',
    scope: 'region',
    code: 'FR-IDF',
    state: 'fired',
    currentRate: 812.5,
    baselineRate: 120.25,
    zScore: 9.7,
    ratio: 6.76,
    hourOfWeek: 105,
    at: T0,
    timeZone: 'Europe/Paris',
    localHourOfWeek: 106,
  },
  'geo-baseline': {
    subject: 'region:FR-IDF',
    timeZone: 'Europe/Paris',
    evaluatedUntil: T0,
    samples: Array.from({ length: 168 }, (_, h) => h % 60),
    means: Array.from({ length: 168 }, (_, h) => 100 + h / 4),
    variances: Array.from({ length: 168 }, (_, h) => h * 1.5),
    alert: { firedAt: T0 - 600_000, normalSince: null },
    cooldownUntil: -1,
    updatedAt: T0 + 5,
  },
  policy: {
    id: 'login-failures-per-ip',
    version: 3,
    description: 'Credential stuffing: failed logins per client IP',
    owner: 'security-team',
    mode: 'preview',
    enabled: true,
    definition: JSON.stringify({ key: ['ip'], window: '60s', threshold: 1000, ban: { duration: '10m' } }),
    updatedBy: 'alice@example.com',
    updatedAt: T0,
  },
  'allow-entry': {
    entry: 'cidr:198.51.100.0/24',
    reason: 'synthetic monitoring probes',
    addedBy: 'bob@example.com',
    addedAt: T0,
    expiresAt: T0 + 86_400_000,
  },
  'audit-record': {
    auditId: 'aud-000123',
    actor: 'alice@example.com',
    action: 'policy.update',
    target: 'login-failures-per-ip',
    before: '{"version":2}',
    after: '{"version":3}',
    at: T0,
    requestId: 'req-9f8e7d',
    forced: null,
  },
  'dlq-record': {
    originalTopic: 'banstream.events.v1',
    partition: 7,
    offset: 123_456_789_012,
    key: Buffer.from('203.0.113.0/24'),
    value: Buffer.from([0x7b, 0x22, 0x6f]),
    reasonCode: 'SCHEMA_BAD_MAGIC',
    reasonMessage: 'not an Avro single-object encoding: bad magic bytes',
    at: T0,
  },
  feed: {
    name: 'spamhaus-drop',
    source: 'https://www.spamhaus.org/drop/drop.txt',
    format: 'netset',
    csvColumn: null,
    csvHeader: false,
    refreshMs: 3_600_000,
    banMs: 86_400_000,
    httpStatus: 403,
    reason: 'Spamhaus DROP',
    maxEntries: 100_000,
    forced: null,
    createdBy: 'alice@example.com',
    updatedAt: T0,
    lastRefresh: '{"at":1700000000000,"ok":true}',
  },
  'subject-count-batch': {
    sourcePartition: 3,
    entries: [
      { offset: 41, policyId: 'api-default', subject: 'apikey:0123456789abcdef0123456789abcdef', timestamp: T0, count: 3, seq: 0 },
      { offset: 42, policyId: 'geo', subject: 'country:FR', timestamp: T0 + 1000, count: 250, seq: 0 },
    ],
  },
};

describe('the schemas/avro catalog', () => {
  it('holds exactly the records SCHEMA_NAMES names', () => {
    expect([...catalog.names]).toEqual(Object.values(SCHEMA_NAMES).sort());
  });

  it.each(catalog.names.flatMap((name) => catalog.versions(name)))('$name v$version: canonical form agrees with avsc', (v) => {
    expect(v.canonicalForm).toBe(JSON.stringify(v.type.schema()));
    expect(v.canonicalForm).toBe(parsingCanonicalForm(v.schema));
  });

  it.each(catalog.names.flatMap((name) => catalog.versions(name)))('$name v$version: namespaced and documented', (v) => {
    const undocumented: string[] = [];
    const walk = (s: unknown, path: string): void => {
      if (Array.isArray(s)) s.forEach((b, i) => walk(b, `${path}|${i}`));
      if (s === null || typeof s !== 'object' || Array.isArray(s)) return;
      const o = s as Record<string, unknown>;
      if (o['type'] === 'record' && typeof o['doc'] !== 'string') undocumented.push(path);
      for (const f of (o['fields'] as Record<string, unknown>[] | undefined) ?? []) {
        if (typeof f['doc'] !== 'string') undocumented.push(`${path}.${String(f['name'])}`);
        walk(f['type'], `${path}.${String(f['name'])}`);
      }
      walk(o['items'], `${path}[]`);
      walk(o['values'], `${path}{}`);
    };
    walk(v.schema, v.name);
    expect(undocumented).toEqual([]);
    expect(v.type.name).toMatch(/^banstream\.v1\./);
  });

  it('request-event-batch inlines the same RequestEvent as request-event', () => {
    const batch = catalog.latest(SCHEMA_NAMES.requestEventBatch).schema as { fields: { type: { items: unknown } }[] };
    const inlined = batch.fields[0]?.type.items;
    expect(inlined).toEqual(catalog.latest(SCHEMA_NAMES.requestEvent).schema);
  });

  it('reads bans without their evidence for enforcers, from v1 and v2 writers alike', () => {
    const read = banWithoutEvidence(catalog);
    const { evidence, ...rest } = samples.ban;
    expect(evidence).not.toBeNull();
    const fromV2 = read.decode(catalog.codec(SCHEMA_NAMES.ban).encode(samples.ban));
    expect(fromV2).toEqual(rest);
    expect('evidence' in fromV2).toBe(false);
    const v1 = catalog.versions(SCHEMA_NAMES.ban)[0]!;
    expect(read.decode(encodeSingleObject(v1.type, v1.fingerprint, rest, 'ban'))).toEqual(rest);
  });

  it('ban-history inlines the same Ban as ban (a new Ban version needs a new ban-history version)', () => {
    const entry = catalog.latest(SCHEMA_NAMES.banHistory).schema as { fields: { name: string; type: unknown }[] };
    expect(entry.fields.find((f) => f.name === 'ban')?.type).toEqual(catalog.latest(SCHEMA_NAMES.ban).schema);
  });
});

describe('round trip of every record', () => {
  it.each(Object.keys(samples) as SchemaName[])('%s', (name) => {
    const codec = catalog.codec<unknown>(name);
    const buf = codec.encode(samples[name]);
    expect(buf.readBigUInt64LE(2)).toBe(codec.fingerprint);
    expect(codec.decode(buf)).toEqual(samples[name]);
  });

  it('fills defaults for omitted optional fields', () => {
    const codec = catalog.codec(SCHEMA_NAMES.requestEvent);
    const partial: Partial<RequestEvent> = requestEvent(5);
    for (const key of ['country', 'region', 'asn', 'route', 'userId', 'apiKeyHash', 'headers', 'latencyMs', 'cost'] as const) {
      delete partial[key];
    }
    const decoded = codec.decode(codec.encode(partial as RequestEvent));
    expect(decoded).toEqual({ ...partial, country: null, region: null, asn: null, route: null, userId: null, apiKeyHash: null, headers: {}, latencyMs: null, cost: 1 });
  });

  it('reads a v1 events record (written before costs) with cost 1, and a v1 reader skips a v2 cost', () => {
    const codec = catalog.codec(SCHEMA_NAMES.requestEventBatch);
    const [v1, v2] = catalog.versions(SCHEMA_NAMES.requestEventBatch);
    expect(v2!.fingerprint).toBe(codec.fingerprint);
    const old: Partial<RequestEvent> = requestEvent(4);
    delete old.cost;
    const written = encodeSingleObject(v1!.type, v1!.fingerprint, { events: [old] }, 'request-event-batch');
    expect(codec.decode(written).events).toEqual([{ ...old, cost: 1 }]);
    // A reader still on v1 during a rolling deploy: Avro resolution skips the field it does not know.
    const newer = codec.encode({ events: [requestEvent(4)] });
    const resolver = v1!.type.createResolver(v2!.type);
    expect(v1!.type.fromBuffer(newer.subarray(10), resolver)).toMatchObject({ events: [old] });
  });

  it('a RequestEventBatch of 1,000 events', () => {
    const codec = catalog.codec(SCHEMA_NAMES.requestEventBatch);
    const batch = { events: Array.from({ length: 1000 }, (_, i) => requestEvent(i)) };
    const buf = codec.encode(batch);
    const decoded = codec.decode(buf);
    expect(decoded.events).toHaveLength(1000);
    expect(decoded).toEqual(batch);
    // Compact: no field names on the wire.
    expect(buf.length).toBeLessThan(0.6 * Buffer.byteLength(JSON.stringify(batch)));
  });

  it('names the bad event of a batch', () => {
    const codec = catalog.codec(SCHEMA_NAMES.requestEventBatch);
    const events = [requestEvent(0), { ...requestEvent(1), status: '200' as unknown as number }];
    expect(() => codec.encode({ events })).toThrow(/events\.1\.status: expected int/);
  });
});
