import maxmind, { type Reader, type Response } from 'maxmind';
import { BanstreamError } from '@banstream/core';
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

/** Lookups of recent addresses are cached: traffic repeats its clients. */
const CACHE_ENTRIES = 50_000;

/** Opens an MMDB file once, at start; a missing or corrupt file stops the start with its path named. */
export async function openGeoDatabase(path: string): Promise<GeoDatabase> {
  let reader: Reader<Response>;
  try {
    reader = await maxmind.open<Response>(path, { cache: { max: CACHE_ENTRIES } });
  } catch (cause) {
    throw new BanstreamError('CONFIG_INVALID', `INGEST_GEOIP_DB: cannot open ${path} as an MMDB database: ${(cause as Error).message}`, { cause });
  }
  return {
    description: { path, type: reader.metadata.databaseType, builtAt: reader.metadata.buildEpoch.toISOString() },
    lookup: (ip) => toGeoInfo(reader.get(ip) as GeoRecord | null),
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
