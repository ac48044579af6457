import type { ServerResponse } from 'node:http';
import type { Logger } from '@banstream/platform';

interface Stream {
  res: ServerResponse;
  /** The token the stream's session was opened with, if told: at most MAX_STREAMS_PER_TOKEN each. */
  owner: string | undefined;
  /** False once the session it was opened with has ended (sign-out, expiry): the stream is closed. */
  alive(): boolean;
}

export interface StreamHubOptions {
  max: number;
  tickMs: number;
  /** The data each tick sends to every stream (computed once per tick, whatever the number of streams). */
  snapshot(): Promise<unknown>;
  logger: Logger;
}

/**
 * The live Overview's server-sent event streams: at most `max` at once and one per
 * session (a session's new stream replaces its old one, so reloading a page does not
 * leak), and at most MAX_STREAMS_PER_TOKEN per token (its oldest is ended for a new
 * one), so one token signed in many times cannot take every stream. One ticker computes a snapshot every `tickMs` while any stream is open and
 * writes it to each, which is also the heartbeat that keeps proxies from closing an
 * idle connection. A stream whose session ended is closed at the next tick.
 */
export class StreamHub {
  private readonly streams = new Map<string, Stream>();
  private timer: NodeJS.Timeout | undefined;
  private ticking = false;
  private last: string | undefined;

  constructor(private readonly options: StreamHubOptions) {}

  get size(): number {
    return this.streams.size;
  }

  /** Whether a stream for `key` (of `owner`'s session) may open: it replaces one of its own or of its token's, or there is room. */
  hasRoom(key: string, owner?: string): boolean {
    return this.streams.has(key) || this.streams.size < this.options.max || (owner !== undefined && this.oldestOf(owner) !== undefined);
  }

  open(key: string, res: ServerResponse, alive: () => boolean, owner?: string): void {
    const previous = this.streams.get(key);
    if (previous !== undefined) {
      this.streams.delete(key);
      previous.res.end();
    }
    const own = owner === undefined ? 0 : this.countOf(owner);
    if (own >= MAX_STREAMS_PER_TOKEN || (own > 0 && this.streams.size >= this.options.max)) {
      const oldest = this.oldestOf(owner!)!;
      const ended = this.streams.get(oldest)!;
      this.streams.delete(oldest);
      ended.res.end();
    }
    const stream = { res, alive, owner };
    this.streams.set(key, stream);
    res.on('close', () => {
      if (this.streams.get(key) === stream) this.streams.delete(key);
      if (this.streams.size === 0) this.stopTicker();
    });
    res.write(`retry: ${this.options.tickMs * 2}\n\n`);
    // While the ticker runs the last snapshot is at most a tick old: send it at once, so a page has numbers before the next tick.
    if (this.timer !== undefined && this.last !== undefined) res.write(this.last);
    if (this.timer === undefined) {
      this.timer = setInterval(() => void this.tick(), this.options.tickMs);
      void this.tick();
    }
  }

  /** Streams open for `owner`. */
  private countOf(owner: string): number {
    let n = 0;
    for (const s of this.streams.values()) if (s.owner === owner) n++;
    return n;
  }

  /** The key of `owner`'s oldest open stream (Map order is opening order). */
  private oldestOf(owner: string): string | undefined {
    for (const [key, s] of this.streams) if (s.owner === owner) return key;
    return undefined;
  }

  closeAll(): void {
    this.stopTicker();
    for (const s of this.streams.values()) s.res.end();
    this.streams.clear();
  }

  private stopTicker(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private async tick(): Promise<void> {
    // A snapshot slower than a tick (a metrics source timing out) skips ticks rather than piling up.
    if (this.ticking) return;
    this.ticking = true;
    try {
      const data = await this.options.snapshot();
      this.last = `event: overview\ndata: ${JSON.stringify(data)}\n\n`;
      for (const [key, s] of this.streams) {
        if (!s.alive()) {
          this.streams.delete(key);
          s.res.end();
          continue;
        }
        // A client that does not read gets no more than the socket's buffer: past it, it is dropped.
        if (s.res.writableLength > 1024 * 1024) {
          this.streams.delete(key);
          s.res.destroy();
          continue;
        }
        s.res.write(this.last);
      }
    } catch (error) {
      this.options.logger.warn({ err: error }, 'console overview snapshot failed; the streams get the next one');
    } finally {
      this.ticking = false;
      if (this.streams.size === 0) this.stopTicker();
    }
  }
}

/** Live overview streams one token holds at once: a page per browser signed in with it; a new one ends its oldest. */
export const MAX_STREAMS_PER_TOKEN = 3;
