/**
 * Soak traffic with churn: a rotating population of clients, so window state has to
 * expire rather than grow. At any time `activeIps` addresses (and `activeUsers`
 * users) are in use; the window slides so each one is active for its lifetime and
 * then never seen again, and new ones keep arriving. Every `attackEveryMs` an
 * attacker starts for `attackMs`: alternately an address flooding (banned by a per-IP
 * policy; short bans expire into tombstones) and a user scraping from many addresses
 * (throttled by a per-user policy). Pure: the same seed and times give the same events.
 */
import type { RequestEvent } from '@banstream/schemas';

export interface TrafficShape {
  activeIps: number;
  ipLifetimeMs: number;
  activeUsers: number;
  userLifetimeMs: number;
  /** Share of normal events that carry a user id. */
  userShare: number;
  attackEveryMs: number;
  attackMs: number;
  /** Events per second of one flooding address. */
  floodRate: number;
  /** Events per second of one scraping user. */
  scraperRate: number;
}

export const DEFAULT_SHAPE: TrafficShape = {
  activeIps: 20_000,
  ipLifetimeMs: 60_000,
  activeUsers: 30_000,
  userLifetimeMs: 120_000,
  userShare: 0.6,
  attackEveryMs: 2_000,
  attackMs: 15_000,
  floodRate: 60,
  scraperRate: 30,
};

/** Hosts used per /24: addresses are dense within a network, as a real client population is. */
const HOSTS = 250;
const COUNTRIES = ['US', 'US', 'US', 'DE', 'DE', 'FR', 'FR', 'GB', 'GB', 'BR', 'IN', 'JP', 'CA', 'NL', 'AU'];
const AGENTS = ['Mozilla/5.0 (X11; Linux x86_64)', 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0)', 'okhttp/4.12.0'];

/** The address of normal client k: 10.a.b.c, HOSTS per /24, networks in order of arrival. */
export function clientIp(k: number): string {
  const net = Math.floor(k / HOSTS);
  return `10.${(net >> 8) & 255}.${net & 255}.${(k % HOSTS) + 1}`;
}

/** The address of flooding attacker a, in 198.18.0.0/15 (benchmarking range). */
export function attackerIp(a: number): string {
  return `198.${18 + ((a >> 16) & 1)}.${(a >> 8) & 255}.${a & 255}`;
}

export const scraperUser = (a: number): string => `scraper-${a}`;

/** Attack a floods from one address when even, scrapes as one user when odd. */
export const isFlood = (a: number): boolean => a % 2 === 0;

export class Traffic {
  private serial = 0;
  /** Events already emitted per running attack. */
  private readonly attacks = new Map<number, number>();

  constructor(
    private readonly shape: TrafficShape,
    private readonly rand: () => number,
    private readonly idPrefix = 's',
  ) {}

  /** The oldest active key of a rotating population at `elapsedMs`. */
  static base(elapsedMs: number, active: number, lifetimeMs: number): number {
    return Math.floor((Math.max(0, elapsedMs) * active) / lifetimeMs);
  }

  /**
   * `n` events for the moment `elapsedMs` into the run, stamped `nowMs`: first what
   * the running attacks are due, then normal traffic for the rest.
   */
  next(n: number, elapsedMs: number, nowMs: number): RequestEvent[] {
    const out: RequestEvent[] = [];
    this.attackEvents(elapsedMs, nowMs, n, out);
    const s = this.shape;
    const ipBase = Traffic.base(elapsedMs, s.activeIps, s.ipLifetimeMs);
    const userBase = Traffic.base(elapsedMs, s.activeUsers, s.userLifetimeMs);
    while (out.length < n) {
      const k = ipBase + Math.floor(this.rand() * s.activeIps);
      const user = this.rand() < s.userShare ? `u${userBase + Math.floor(this.rand() * s.activeUsers)}` : null;
      out.push(this.event(clientIp(k), k, user, nowMs));
    }
    return out;
  }

  /** Attacks started so far (bans and throttles to expect at most). */
  attacksStarted(elapsedMs: number): number {
    return Math.floor(Math.max(0, elapsedMs) / this.shape.attackEveryMs) + 1;
  }

  private attackEvents(elapsedMs: number, nowMs: number, room: number, out: RequestEvent[]): void {
    const s = this.shape;
    const latest = Math.floor(Math.max(0, elapsedMs) / s.attackEveryMs);
    // Attacks that ended over one attack interval ago have emitted all they were due.
    const lowest = Math.max(0, Math.floor((elapsedMs - s.attackMs) / s.attackEveryMs) - 1);
    for (let a = lowest; a <= latest; a++) {
      const start = a * s.attackEveryMs;
      const rate = isFlood(a) ? s.floodRate : s.scraperRate;
      const due = Math.floor((rate * (Math.min(elapsedMs, start + s.attackMs) - start)) / 1000);
      const done = this.attacks.get(a) ?? 0;
      const take = Math.min(due - done, room - out.length);
      for (let i = 0; i < take; i++) {
        if (isFlood(a)) out.push(this.event(attackerIp(a), a, null, nowMs));
        else {
          const k = Traffic.base(elapsedMs, s.activeIps, s.ipLifetimeMs) + Math.floor(this.rand() * s.activeIps);
          out.push(this.event(clientIp(k), k, scraperUser(a), nowMs));
        }
      }
      if (take > 0) this.attacks.set(a, done + take);
    }
    // Finished attacks are forgotten: the generator's own state stays bounded too.
    for (const a of this.attacks.keys()) if (a < lowest) this.attacks.delete(a);
  }

  private event(ip: string, k: number, userId: string | null, nowMs: number): RequestEvent {
    const r = this.rand();
    const net = Math.floor(k / HOSTS);
    const login = r < 0.1;
    return {
      eventId: `${this.idPrefix}${(this.serial++).toString(36)}`,
      timestamp: nowMs,
      ip,
      country: COUNTRIES[net % COUNTRIES.length]!,
      region: null,
      asn: null,
      method: login ? 'POST' : 'GET',
      host: 'shop.example',
      path: login ? '/login' : r < 0.25 ? '/' : r < 0.3 ? '/api/items' : `/products/${k % 1000}`,
      route: null,
      status: login && r < 0.02 ? 401 : 200,
      userId,
      apiKeyHash: null,
      headers: { 'user-agent': AGENTS[k % AGENTS.length]! },
      edgeId: `edge-${net % 4}`,
      latencyMs: null,
    };
  }

  /** Running attacks the generator still tracks (tests: it forgets finished ones). */
  get trackedAttacks(): number {
    return this.attacks.size;
  }
}
