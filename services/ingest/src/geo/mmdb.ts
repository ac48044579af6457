import maxmind, { type Reader, type Response } from 'maxmind';
import { BanstreamError, formatIpv4, tryParseIp } from '@banstream/core';
import type { GeoInfo, GeoLookup } from './enrich.js';

/**
 * The record shapes worth reading: MaxMind's GeoIP2/GeoLite2 (country, city, ASN) and
 * the flat `country_code` of the freely licensed ip-location-db databases.
 */
interface GeoRecord {
  country_code?: string;
  country?: { iso_code?: string };
  registered_country?: { iso_code?: string };
  subdivisions?: { iso_code?: string }[];
  autonomous_system_number?: number;
}

export interface GeoDatabase extends GeoLookup {
  /** What was opened, for the start-up log line. */
  readonly description: { path: string; type: string; builtAt: string };
}

/** Decoded records kept by maxmind, and answers kept per IPv4 /24 (dropped whole past the bound). */
const RECORD_CACHE_ENTRIES = 50_000;
const NETWORK_CACHE_ENTRIES = 200_000;

/** Opens an MMDB file once, at start; a missing or corrupt file stops the start with its path named. */
export async function openGeoDatabase(path: string): Promise<GeoDatabase> {
  let reader: Reader<Response>;
  try {
    reader = await maxmind.open<Response>(path, { cache: { max: RECORD_CACHE_ENTRIES } });
  } catch (cause) {
    throw new BanstreamError('CONFIG_INVALID', `INGEST_GEOIP_DB: cannot open ${path} as an MMDB database: ${(cause as Error).message}`, { cause });
  }
  // A tree walk per event is most of the cost; the database answers for a whole /24
  // whenever the network it matched is no longer than 24 bits. null: known to have no answer.
  const byNetwork = new Map<number, GeoInfo | null>();
  const lookupIpv4 = (address: number, text?: string): GeoInfo | undefined => {
    const network = address >>> 8;
    const known = byNetwork.get(network);
    if (known !== undefined) return known ?? undefined;
    const [record, prefixLength] = reader.getWithPrefixLength(text ?? formatIpv4(address));
    const info = toGeoInfo(record as GeoRecord | null);
    if (prefixLength <= 24) {
      if (byNetwork.size >= NETWORK_CACHE_ENTRIES) byNetwork.clear();
      byNetwork.set(network, info ?? null);
    }
    return info;
  };
  return {
    description: { path, type: reader.metadata.databaseType, builtAt: reader.metadata.buildEpoch.toISOString() },
    lookup(ip) {
      const parsed = tryParseIp(ip);
      if (parsed?.family === 4) return lookupIpv4(((parsed.bytes[0]! << 24) | (parsed.bytes[1]! << 16) | (parsed.bytes[2]! << 8) | parsed.bytes[3]!) >>> 0, parsed.text);
      return toGeoInfo(reader.get(ip) as GeoRecord | null);
    },
    lookupIpv4: (address) => lookupIpv4(address),
  };
}

export function toGeoInfo(record: GeoRecord | null): GeoInfo | undefined {
  if (record === null) return undefined;
  const country = record.country_code ?? record.country?.iso_code ?? record.registered_country?.iso_code;
  if (country === undefined || !/^[A-Za-z]{2}$/.test(country)) return undefined;
  const upper = country.toUpperCase();
  const subdivision = record.subdivisions?.[0]?.iso_code;
  return {
    country: upper,
    region: subdivision === undefined ? null : `${upper}-${subdivision.toUpperCase()}`,
    asn: record.autonomous_system_number ?? null,
  };
}
