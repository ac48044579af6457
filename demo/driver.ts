/**
 * Sends the scenario's requests over real HTTP to the edges (round robin), as a
 * proxy in front of them would (X-Forwarded-For, CF-IPCountry), and records what
 * each class got back and, per attack, when it started and when each edge first
 * refused it.
 */
import { activeAttacks, CLASSES, type Attacker, type DemoRequest, type Scenario, type TrafficClass } from './scenario.js';

export interface ClassStats {
  sent: number;
  allowed: number;
  denied: number;
  /** No answer (connection refused, timeout). */
  failed: number;
}

export interface AttackEpisode {
  /** Wall time of the attack's first request in this episode. */
  startedAt: number;
  /** Per edge URL, when it first refused the attacker in this episode. */
  deniedAt: Record<string, number>;
}

export interface DriverOptions {
  edges: readonly string[];
  scenario: Scenario;
  /** How often requests due are sent. Default 50 ms. */
  tickMs?: number;
}

const ATTACKERS: readonly Attacker[] = ['flood', 'botnet'];

export class Driver {
  readonly stats = Object.fromEntries(CLASSES.map((c) => [c, { sent: 0, allowed: 0, denied: 0, failed: 0 }])) as Record<TrafficClass, ClassStats>;
  /** The current (or last) episode of each attack. */
  readonly attacks: Partial<Record<Attacker, AttackEpisode>> = {};
  /** Legitimate addresses an edge refused: should stay empty. */
  readonly deniedLegit = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private last = 0;
  private next = 0;
  private readonly inFlight = new Set<Promise<void>>();
  private running = new Set<string>();

  constructor(private readonly options: DriverOptions) {}

  start(): this {
    this.last = Date.now();
    this.timer = setInterval(() => this.tick(), this.options.tickMs ?? 50);
    return this;
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await Promise.all(this.inFlight);
  }

  /** From the attack's start to refused at every edge, in ms; undefined until then. */
  propagationMs(attacker: Attacker): number | undefined {
    const episode = this.attacks[attacker];
    if (!episode || this.options.edges.some((e) => episode.deniedAt[e] === undefined)) return undefined;
    return Math.max(...Object.values(episode.deniedAt)) - episode.startedAt;
  }

  private tick(): void {
    const now = Date.now();
    const { scenario } = this.options;
    const on = activeAttacks(scenario.options.phases, now - scenario.startedAt);
    for (const a of ATTACKERS) {
      if (on.has(a) && !this.running.has(a)) this.attacks[a] = { startedAt: Number.POSITIVE_INFINITY, deniedAt: {} };
    }
    this.running = new Set([...on].filter((a): a is Attacker => a !== 'spike'));
    for (const r of scenario.between(this.last, now)) this.send(r);
    this.last = now;
  }

  private send(r: DemoRequest): void {
    const edges = this.options.edges;
    const edge = edges[this.next++ % edges.length]!;
    const stats = this.stats[r.cls];
    stats.sent++;
    const sentAt = Date.now();
    const episode = r.cls === 'flood' || r.cls === 'botnet' ? this.attacks[r.cls] : undefined;
    if (episode && sentAt < episode.startedAt) episode.startedAt = sentAt;
    const headers: Record<string, string> = { 'x-forwarded-for': r.ip, 'user-agent': r.cls === 'legit' || r.cls === 'spike' ? 'Mozilla/5.0' : 'python-requests/2.32' };
    if (r.country) headers['cf-ipcountry'] = r.country;
    const body = r.method === 'POST' ? JSON.stringify({ user: r.user, password: r.password }) : undefined;
    if (body) headers['content-type'] = 'application/json';
    const done = fetch(`${edge}${r.path}`, { method: r.method, headers, ...(body ? { body } : {}), signal: AbortSignal.timeout(10_000) })
      .then(
        async (res) => {
          await res.arrayBuffer();
          if (res.status === 403 || res.status === 429) {
            stats.denied++;
            if (r.cls === 'legit') this.deniedLegit.add(r.ip);
            if (episode && episode.deniedAt[edge] === undefined) episode.deniedAt[edge] = Date.now();
          } else stats.allowed++;
        },
        () => {
          stats.failed++;
        },
      )
      .finally(() => this.inFlight.delete(done));
    this.inFlight.add(done);
  }
}
