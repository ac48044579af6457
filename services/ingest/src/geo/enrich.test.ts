import { describe, expect, it } from 'vitest';
import { createRequire } from 'node:module';
import type { RequestEvent } from '@banstream/schemas';
import { enrichGeo } from './enrich.js';
import { openGeoDatabase, toGeoInfo } from './mmdb.js';

// A CC0 country database shipped in an npm package (data from the RIRs' WHOIS, via NRO).
const DB = createRequire(import.meta.url).resolve('@ip-location-db/geo-whois-asn-country-mmdb/geo-whois-asn-country.mmdb');

const event = (ip: string, extra: Partial<RequestEvent> = {}): RequestEvent => ({
  eventId: 'e', timestamp: 1, ip, country: null, region: null, asn: null, method: 'GET', host: 'h', path: '/', route: null, status: 200,
  userId: null, apiKeyHash: null, headers: {}, edgeId: 'edge', latencyMs: null, ...extra,
});

describe('geography enrichment', () => {
  it('fills the country from the MMDB database, for IPv4 and IPv6', async () => {
    const geo = await openGeoDatabase(DB);
    const v4 = event('8.8.8.8');
    const v6 = event('2a01:e0a::1');
    expect([enrichGeo(v4, geo), enrichGeo(v6, geo)]).toEqual(['filled', 'filled']);
    expect([v4.country, v6.country]).toEqual(['US', 'FR']);
    expect(geo.description.type).toBe('country ipvAll');
  });

  it('keeps a country the edge supplied (a CDN header), and leaves unknown addresses alone', async () => {
    const geo = await openGeoDatabase(DB);
    const cdn = event('8.8.8.8', { country: 'DE', region: 'DE-BE' });
    const privateIp = event('10.1.2.3');
    expect([enrichGeo(cdn, geo), enrichGeo(privateIp, geo)]).toEqual(['kept', 'unknown']);
    expect([cdn.country, cdn.region, privateIp.country]).toEqual(['DE', 'DE-BE', null]);
  });

  it('reads MaxMind GeoIP2 City and ASN records too', () => {
    expect(toGeoInfo({ country: { iso_code: 'fr' }, subdivisions: [{ iso_code: 'IDF' }], autonomous_system_number: 3215 })).toEqual({ country: 'FR', region: 'FR-IDF', asn: 3215 });
    expect(toGeoInfo({ registered_country: { iso_code: 'GB' } })).toEqual({ country: 'GB', region: null, asn: null });
    expect(toGeoInfo({ autonomous_system_number: 1 })).toBeUndefined();
    expect(toGeoInfo(null)).toBeUndefined();
  });

  it('names the path when the database cannot be opened', async () => {
    await expect(openGeoDatabase('/nonexistent/geo.mmdb')).rejects.toThrow('INGEST_GEOIP_DB: cannot open /nonexistent/geo.mmdb as an MMDB database');
  });
});
