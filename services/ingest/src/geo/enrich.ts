import type { RequestEvent } from '@banstream/schemas';

/** What a geography database knows of an address. */
export interface GeoInfo {
  /** ISO 3166-1 alpha-2, upper case. */
  country: string;
  /** ISO 3166-2 (`FR-IDF`), when the database has subdivisions. */
  region: string | null;
  asn: number | null;
}

export interface GeoLookup {
  /** By canonical text, IPv4 or IPv6. */
  lookup(ip: string): GeoInfo | undefined;
  /** By an IPv4 address's 32-bit value: what `lookup` gives for its text. */
  lookupIpv4(address: number): GeoInfo | undefined;
}

export type GeoOutcome = 'kept' | 'filled' | 'unknown';

/**
 * Fills country (and region and ASN when the database has them and the event has
 * not) of an event without a country. An event that has one keeps it, region
 * included: the edge read it from its CDN (CF-IPCountry, CloudFront-Viewer-Country),
 * which sees the client better than an address database does.
 */
export function enrichGeo(event: RequestEvent, geo: GeoLookup): GeoOutcome {
  if (event.country !== null) return 'kept';
  const info = geo.lookup(event.ip);
  if (info === undefined) return 'unknown';
  event.country = info.country;
  if (event.region === null) event.region = info.region;
  if (event.asn === null) event.asn = info.asn;
  return 'filled';
}
