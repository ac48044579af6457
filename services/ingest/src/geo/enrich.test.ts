import { describe, expect, it } from 'vitest';
import { createRequire } from 'node:module';
import { requestEvent, type RequestEvent } from '@banstream/schemas';
import { enrichGeo } from './enrich.js';
import maxmind from 'maxmind';
import { formatIpv4 } from '@banstream/core';
import { openGeoDatabase, toGeoInfo } from './mmdb.js';

// A CC0 country database shipped in an npm package (data from the RIRs' WHOIS, via NRO).
const DB = createRequire(import.meta.url).resolve('@ip-location-db/geo-whois-asn-country-mmdb/geo-whois-asn-country.mmdb');

const event = (ip: string, extra: Partial<RequestEvent> = {}): RequestEvent => requestEvent({ ip, ...extra });

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

  it('answers an IPv4 value as its text, and as an uncached reader does, also for addresses of a /24 seen before', async () => {
    const geo = await openGeoDatabase(DB);
    const oracle = await maxmind.open(DB);
    let seed = 11;
    const random = () => (seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0) / 2 ** 32;
    // Few /24s, many addresses in each: the second and later lookups of a /24 come from
    // the cache. Among them /24s the database splits (about 1 random address in 1,000),
    // every address of which is asked: one answer must not stand for the whole /24.
    const networks = Array.from({ length: 300 }, () => Math.floor(random() * 2 ** 24));
    const split: number[] = [];
    while (split.length < 5) {
      const address = Math.floor(random() * 2 ** 32);
      if (oracle.getWithPrefixLength(formatIpv4(address))[1] > 24) split.push(address >>> 8);
    }
    const addresses = [
      ...Array.from({ length: 3_000 }, (_, i) => networks[i % networks.length]! * 256 + Math.floor(random() * 256)),
      ...split.flatMap((network) => Array.from({ length: 256 }, (_, host) => network * 256 + host)),
    ];
    let differing = 0;
    for (const address of addresses) {
      const expected = toGeoInfo(oracle.get(formatIpv4(address)) as never);
      expect(geo.lookupIpv4(address), formatIpv4(address)).toEqual(expected);
      expect(geo.lookup(formatIpv4(address))).toEqual(expected);
      if (JSON.stringify(expected) !== JSON.stringify(toGeoInfo(oracle.get(formatIpv4(address & 0xffffff00)) as never))) differing++;
    }
    expect(differing).toBeGreaterThan(0); // the split /24s do answer differently inside
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
