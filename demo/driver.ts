/**
 * Sends the scenario's requests over real HTTP to the edges (round robin), as a
 * proxy in front of them would (X-Forwarded-For, CF-IPCountry), and records what
 * each class got back and, per attack, when it started and when each edge first
 * refused it. A try that gets no answer is sent once more, to the next edge, as such
 * a proxy would; what went wrong is counted, so a loaded host is told apart from an
 * edge that refuses.
 */
import { activeAttacks, CLASSES, type Attacker, type DemoRequest, type Scenario, type TrafficClass } from './scenario.js';

export interface ClassStats {
  sent: number;
  allowed: number;
  denied: number;
  /** Answered with a server error (5xx). */
  erred: number;
  /** Got no answer (connection refused or reset, timeout) and was sent once more, to the next edge. */
  retried: number;
  /** Got no answer from either try. */
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
  readonly stats = Object.fromEntries(CLASSES.map((c) => [c, { sent: 0, allowed: 0, denied: 0, erred: 0, retried: 0, failed: 0 }])) as Record<TrafficClass, ClassStats>;
  /** The current (or last) episode of each attack. */
  readonly attacks: Partial<Record<Attacker, AttackEpisode>> = {};
  /** Legitimate addresses an edge refused: should stay empty. */
  readonly deniedLegit = new Set<string>();
  /** Tries that got no answer, per class and reason (the error's code or name). */
  readonly failures: Partial<Record<TrafficClass, Record<string, number>>> = {};
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
    for (const r of scenario.between(this.last, now)) void this.send(r);
    this.last = now;
  }

  /** Sends one request now; resolves when it is counted. */
  send(r: DemoRequest): Promise<void> {
    const stats = this.stats[r.cls];
    stats.sent++;
    const sentAt = Date.now();
    const episode = r.cls === 'flood' || r.cls === 'botnet' ? this.attacks[r.cls] : undefined;
    if (episode && sentAt < episode.startedAt) episode.startedAt = sentAt;
    const done = this.attempt(r, episode)
      .catch(() => {
        // No answer: a proxy would try the next edge once (nginx's proxy_next_upstream error timeout).
        stats.retried++;
        return this.attempt(r, episode);
      })
      .catch(() => {
        stats.failed++;
      })
      .finally(() => this.inFlight.delete(done));
    this.inFlight.add(done);
    return done;
  }

  /** One try at the next edge (round robin); rejects when no answer came, after counting why. */
  private async attempt(r: DemoRequest, episode: AttackEpisode | undefined): Promise<void> {
    const edges = this.options.edges;
    const edge = edges[this.next++ % edges.length]!;
    const stats = this.stats[r.cls];
    const headers: Record<string, string> = { 'x-forwarded-for': r.ip, 'user-agent': r.cls === 'legit' || r.cls === 'spike' ? 'Mozilla/5.0' : 'python-requests/2.32' };
    if (r.country) headers['cf-ipcountry'] = r.country;
    const body = r.method === 'POST' ? JSON.stringify({ user: r.user, password: r.password }) : undefined;
    if (body) headers['content-type'] = 'application/json';
    let res: Response;
    try {
      res = await fetch(`${edge}${r.path}`, { method: r.method, headers, ...(body ? { body } : {}), signal: AbortSignal.timeout(10_000) });
      await res.arrayBuffer();
    } catch (err) {
      const reasons = (this.failures[r.cls] ??= {});
      const reason = failureReason(err);
      reasons[reason] = (reasons[reason] ?? 0) + 1;
      throw err;
    }
    if (res.status === 403 || res.status === 429) {
      stats.denied++;
      if (r.cls === 'legit') this.deniedLegit.add(r.ip);
      if (episode && episode.deniedAt[edge] === undefined) episode.deniedAt[edge] = Date.now();
    } else if (res.status >= 500) stats.erred++;
    else stats.allowed++;
  }
}

/** What undici's fetch says went wrong: the cause's code (ECONNRESET, UND_ERR_SOCKET…) or the error's name (TimeoutError). */
function failureReason(err: unknown): string {
  const cause = (err as { cause?: { code?: unknown; name?: unknown } } | undefined)?.cause;
  if (typeof cause?.code === 'string') return cause.code;
  if (typeof cause?.name === 'string') return cause.name;
  return err instanceof Error ? err.name : String(err);
}
