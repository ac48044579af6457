import { BanstreamError } from '../errors.js';
import { apiKeySubjectOf, canonicalSubject, ipSubjectOf, networkPrefix, subjectScope, tryParseCidr, tryParseIp, userSubjectOf, type IpAddress, type RequestAttributes } from '../subjects/index.js';

/**
 * The allowlist wins over every ban and limit. Entries are an IP, a CIDR, a user or
 * an API key, each optionally expiring. A lookup costs one hash probe per subject
 * kind plus one per distinct prefix length present, not one per entry.
 */
export interface AllowlistEntry {
  /** Canonical subject: `ip:…`, `cidr:…`, `user:…` or `apikey:…`. */
  entry: string;
  reason?: string;
  addedBy?: string;
  /** Epoch ms after which the entry no longer applies. */
  expiresAt?: number;
}

const ALLOWED_SCOPES = new Set(['ip', 'cidr', 'user', 'apikey']);

/**
 * `203.0.113.7`, `10.0.0.0/8`, `ip:…`, `cidr:…`, `user:42`, `apikey:<hash>` → canonical
 * subject, as canonicalSubject writes it (so as the enforcer looks it up), of one of
 * the four scopes the allowlist holds.
 */
export function canonicalAllowEntry(text: string): string {
  const subject = canonicalSubject(text);
  if (!ALLOWED_SCOPES.has(subjectScope(subject))) {
    throw new BanstreamError('SUBJECT_INVALID', `allowlist entries are an IP, a CIDR, user:<id> or apikey:<hash>; got ${JSON.stringify(text)}`);
  }
  return subject;
}

export class Allowlist {
  private readonly exact = new Map<string, AllowlistEntry>();
  /** Per family, per prefix length: network text → entry. */
  private readonly networks = { 4: new Map<number, Map<string, AllowlistEntry>>(), 6: new Map<number, Map<string, AllowlistEntry>>() };

  get size(): number {
    let n = this.exact.size;
    for (const family of [this.networks[4], this.networks[6]]) for (const m of family.values()) n += m.size;
    return n;
  }

  /** Adds or replaces an entry; returns its canonical form. */
  add(entry: AllowlistEntry): AllowlistEntry {
    const canonical = { ...entry, entry: canonicalAllowEntry(entry.entry) };
    const cidr = canonical.entry.startsWith('cidr:') ? tryParseCidr(canonical.entry.slice(5)) : undefined;
    if (cidr) {
      const byBits = this.networks[cidr.family];
      let nets = byBits.get(cidr.bits);
      if (!nets) byBits.set(cidr.bits, (nets = new Map()));
      nets.set(cidr.text, canonical);
    } else {
      this.exact.set(canonical.entry, canonical);
    }
    return canonical;
  }

  remove(entry: string): boolean {
    const canonical = canonicalAllowEntry(entry);
    if (!canonical.startsWith('cidr:')) return this.exact.delete(canonical);
    const cidr = tryParseCidr(canonical.slice(5))!;
    const nets = this.networks[cidr.family].get(cidr.bits);
    const removed = nets?.delete(cidr.text) ?? false;
    if (nets?.size === 0) this.networks[cidr.family].delete(cidr.bits);
    return removed;
  }

  /** The live entry that allows this request, if any. */
  find(attrs: RequestAttributes, nowMs: number): AllowlistEntry | undefined {
    const live = (e: AllowlistEntry | undefined) => (e && (e.expiresAt === undefined || e.expiresAt > nowMs) ? e : undefined);
    // Most deployments allowlist few subjects: skip building subject text for an empty table.
    if (this.exact.size > 0) {
      const ip = ipSubjectOf(attrs);
      const byIp = ip === undefined ? undefined : live(this.exact.get(ip));
      if (byIp) return byIp;
      const user = userSubjectOf(attrs);
      const byUser = user === undefined ? undefined : live(this.exact.get(user));
      if (byUser) return byUser;
      const apiKey = apiKeySubjectOf(attrs);
      const byKey = apiKey === undefined ? undefined : live(this.exact.get(apiKey));
      if (byKey) return byKey;
    }
    const address: IpAddress | undefined = attrs.ipAddress ?? tryParseIp(attrs.ip);
    if (!address) return undefined;
    const byBits = this.networks[address.family];
    if (byBits.size === 0) return undefined;
    for (const [bits, nets] of byBits) {
      const hit = live(nets.get(networkPrefix(address, bits)));
      if (hit) return hit;
    }
    return undefined;
  }

  /** Drops expired entries so memory stays proportional to live ones. */
  purgeExpired(nowMs: number): number {
    let purged = 0;
    const sweep = (m: Map<string, AllowlistEntry>) => {
      for (const [k, e] of m) if (e.expiresAt !== undefined && e.expiresAt <= nowMs && m.delete(k)) purged++;
    };
    sweep(this.exact);
    for (const family of [this.networks[4], this.networks[6]]) for (const nets of family.values()) sweep(nets);
    return purged;
  }
}
