import { open, realpath } from 'node:fs/promises';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isAbsolute, relative, resolve } from 'node:path';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import { checkLiteral, FeedAddressError, guardedLookup, literalAddress, resolveChecked, systemResolver, type FeedAddressPolicy, type Resolver } from './address-guard.js';

export interface SourceLimits {
  /** The whole read: connecting, headers and every byte of the body. */
  timeoutMs: number;
  maxBytes: number;
  /** File sources must lie under this directory; none: file sources are refused. */
  fileDir: string | undefined;
  /** Which addresses an http(s) source (and each redirect) may connect to. */
  addresses: FeedAddressPolicy;
  /** Name resolution for those connections; the system's (getaddrinfo) unless a test gives its own. */
  resolver?: Resolver;
}

/** Redirects followed at most, each checked as the URL itself. */
export const MAX_REDIRECTS = 5;

/** Why a source could not be read, or was refused as it came; the feed's bans are kept. */
export class FeedSourceError extends Error {}

/** `http://…`/`https://…` is fetched; anything else is a file path. Checked when the feed is created. */
export function sourceProblem(source: string, fileDir: string | undefined): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(source)) {
    let url: URL;
    try {
      url = new URL(source);
    } catch {
      return `${JSON.stringify(source)} is not a valid URL`;
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return `${url.protocol} URLs are not read: use http(s) or a file path`;
    if (url.username !== '' || url.password !== '') return 'a URL with credentials would be stored and shown in clear: put them elsewhere';
    return undefined;
  }
  if (fileDir === undefined) return 'file sources are off: set CONTROL_FEED_FILE_DIR to the directory they may be read from';
  if (!isAbsolute(source)) return `a file source must be an absolute path under ${fileDir}`;
  const rel = relative(resolve(fileDir), resolve(source));
  if (rel === '' || rel.startsWith('..') || isAbsolute(rel)) return `${source} is not under CONTROL_FEED_FILE_DIR (${fileDir})`;
  return undefined;
}

/**
 * Refuses (FeedAddressError) an http(s) source whose host is a refused address or a name
 * resolving to one, when the feed is created: the operator hears it at once rather than
 * at the first refresh. A name that does not resolve (now, or within the timeout) passes:
 * each read checks again, on the addresses it connects to.
 */
export async function checkSourceAddress(source: string, limits: Pick<SourceLimits, 'addresses' | 'resolver' | 'timeoutMs'>): Promise<void> {
  if (!/^https?:\/\//i.test(source)) return;
  const url = new URL(source);
  checkLiteral(url, limits.addresses);
  if (literalAddress(url) !== undefined) return;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<void>((done) => (timer = setTimeout(done, limits.timeoutMs)));
  try {
    await Promise.race([resolveChecked(url.hostname, limits.addresses, limits.resolver ?? systemResolver), late]);
  } catch (error) {
    if (error instanceof FeedAddressError) throw error;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The text of a feed's source, bounded in time and bytes: a source that is slow,
 * too large, answers other than 200, or sends something that is not UTF-8 text
 * (a NUL byte, invalid sequences) is refused whole.
 */
export async function readSource(source: string, limits: SourceLimits): Promise<string> {
  const problem = sourceProblem(source, limits.fileDir);
  if (problem !== undefined) throw new FeedSourceError(problem);
  const signal = AbortSignal.timeout(limits.timeoutMs);
  const bytes = /^https?:\/\//i.test(source) ? await fetchBytes(source, limits, signal) : await fileBytes(source, limits, signal);
  return asText(bytes);
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/**
 * GETs a URL, following redirects by hand: each hop's URL is checked as the source's was
 * (http(s) only, no credentials, a literal address against the policy) and every name is
 * resolved through guardedLookup, so what is checked is what is connected to.
 */
async function fetchBytes(source: string, limits: SourceLimits, signal: AbortSignal): Promise<Buffer> {
  const lookup = guardedLookup(limits.addresses, limits.resolver ?? systemResolver);
  let url = new URL(source);
  for (let hop = 0; ; hop++) {
    const res = await get(url, limits.addresses, lookup, signal);
    const status = res.statusCode ?? 0;
    if (!REDIRECTS.has(status)) return bodyOf(res, url, limits.maxBytes, signal);
    res.destroy();
    const location = res.headers.location;
    if (location === undefined) throw new FeedSourceError(`${url} answered ${status} without a Location`);
    if (hop === MAX_REDIRECTS) throw new FeedSourceError(`${source} redirected more than ${MAX_REDIRECTS} times`);
    let next: URL;
    try {
      next = new URL(location, url);
    } catch {
      throw new FeedSourceError(`${url} redirected to ${JSON.stringify(location.slice(0, 200))}, not a URL`);
    }
    if (next.protocol !== 'http:' && next.protocol !== 'https:') throw new FeedSourceError(`${url} redirected to a ${next.protocol} URL: only http(s) redirects are followed`);
    const problem = sourceProblem(next.href, undefined);
    if (problem !== undefined) throw new FeedSourceError(`${url} redirected to ${next.protocol}//${next.host}…: ${problem}`);
    url = next;
  }
}

/** One GET, no redirect followed, no connection kept: the answer's head, its body still to read. */
async function get(url: URL, policy: FeedAddressPolicy, lookup: ReturnType<typeof guardedLookup>, signal: AbortSignal): Promise<IncomingMessage> {
  try {
    checkLiteral(url, policy);
    const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
    return await new Promise<IncomingMessage>((answer, fail) => {
      const req = request(url, {
        method: 'GET',
        agent: false,
        lookup: lookup as never,
        signal,
        headers: { accept: 'text/plain, text/csv, */*;q=0.5', 'accept-encoding': 'gzip, deflate, br', 'user-agent': 'banstream-control' },
      });
      req.once('response', answer);
      req.once('error', fail);
      req.end();
    });
  } catch (error) {
    throw readError(error, url, signal);
  }
}

async function bodyOf(res: IncomingMessage, url: URL, maxBytes: number, signal: AbortSignal): Promise<Buffer> {
  try {
    if (res.statusCode !== 200) {
      res.destroy();
      throw new FeedSourceError(`${url} answered ${res.statusCode}`);
    }
    const declared = Number(res.headers['content-length'] ?? Number.NaN);
    if (declared > maxBytes) {
      res.destroy();
      throw new FeedSourceError(`${url} is ${declared} bytes, more than ${maxBytes} (CONTROL_FEED_MAX_BYTES)`);
    }
    const encoding = (res.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
    const decoder = encoding === 'gzip' || encoding === 'x-gzip' ? createGunzip() : encoding === 'deflate' ? createInflate() : encoding === 'br' ? createBrotliDecompress() : undefined;
    if (decoder === undefined && encoding !== 'identity') {
      res.destroy();
      throw new FeedSourceError(`${url} sent content-encoding ${JSON.stringify(encoding.slice(0, 40))}, not one asked for (gzip, deflate, br)`);
    }
    const body = decoder === undefined ? res : res.pipe(decoder);
    if (decoder !== undefined) res.once('error', (error) => decoder.destroy(error));
    const chunks: Buffer[] = [];
    let total = 0;
    try {
      // Decoded bytes count: a small compressed body that inflates past the bound is refused as it grows.
      for await (const chunk of body) {
        total += (chunk as Buffer).byteLength;
        if (total > maxBytes) throw new FeedSourceError(`${url} sent more than ${maxBytes} bytes (CONTROL_FEED_MAX_BYTES)`);
        chunks.push(chunk as Buffer);
      }
    } finally {
      res.destroy();
      decoder?.destroy();
    }
    return Buffer.concat(chunks, total);
  } catch (error) {
    throw readError(error, url, signal);
  }
}

/** A FeedSourceError (or the FeedAddressError as it is) for what went wrong reading `url`. */
function readError(error: unknown, url: URL, signal: AbortSignal): Error {
  if (error instanceof FeedSourceError || error instanceof FeedAddressError) return error;
  if (signal.aborted) return new FeedSourceError(`${url} took longer than the feed read timeout (CONTROL_FEED_TIMEOUT_MS)`);
  const code = (error as NodeJS.ErrnoException).code;
  return new FeedSourceError(`${url} could not be read: ${(error as Error).message}${code && !(error as Error).message.includes(code) ? ` (${code})` : ''}`);
}

async function fileBytes(path: string, limits: SourceLimits, signal: AbortSignal): Promise<Buffer> {
  let real: string;
  try {
    real = await realpath(path);
  } catch (error) {
    throw new FeedSourceError(`${path} could not be read: ${(error as Error).message}`);
  }
  // A link out of the directory is refused as the path itself would be.
  const outside = sourceProblem(real, limits.fileDir === undefined ? undefined : await realpath(limits.fileDir).catch(() => limits.fileDir));
  if (outside !== undefined) throw new FeedSourceError(outside);
  const file = await open(real, 'r').catch((error: Error) => {
    throw new FeedSourceError(`${path} could not be read: ${error.message}`);
  });
  try {
    const stat = await file.stat();
    if (!stat.isFile()) throw new FeedSourceError(`${path} is not a regular file`);
    if (stat.size > limits.maxBytes) throw new FeedSourceError(`${path} is ${stat.size} bytes, more than ${limits.maxBytes} (CONTROL_FEED_MAX_BYTES)`);
    const { buffer } = await file.read({ buffer: Buffer.alloc(stat.size), position: 0, length: stat.size });
    if (signal.aborted) throw new FeedSourceError(`${path} took longer than the feed read timeout (CONTROL_FEED_TIMEOUT_MS)`);
    return buffer;
  } finally {
    await file.close();
  }
}

function asText(bytes: Buffer): string {
  if (bytes.includes(0)) throw new FeedSourceError('the source sent binary data (a NUL byte), not a text list');
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new FeedSourceError('the source sent bytes that are not UTF-8 text');
  }
}
