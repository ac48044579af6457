import { open, realpath } from 'node:fs/promises';
import { isAbsolute, relative, resolve } from 'node:path';

export interface SourceLimits {
  /** The whole read: connecting, headers and every byte of the body. */
  timeoutMs: number;
  maxBytes: number;
  /** File sources must lie under this directory; none: file sources are refused. */
  fileDir: string | undefined;
}

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
 * The text of a feed's source, bounded in time and bytes: a source that is slow,
 * too large, answers other than 200, or sends something that is not UTF-8 text
 * (a NUL byte, invalid sequences) is refused whole.
 */
export async function readSource(source: string, limits: SourceLimits): Promise<string> {
  const problem = sourceProblem(source, limits.fileDir);
  if (problem !== undefined) throw new FeedSourceError(problem);
  const signal = AbortSignal.timeout(limits.timeoutMs);
  const bytes = /^https?:\/\//i.test(source) ? await fetchBytes(source, limits.maxBytes, signal) : await fileBytes(source, limits, signal);
  return asText(bytes);
}

async function fetchBytes(url: string, maxBytes: number, signal: AbortSignal): Promise<Buffer> {
  try {
    const res = await fetch(url, { signal, redirect: 'follow', headers: { accept: 'text/plain, text/csv, */*;q=0.5' } });
    if (res.status !== 200) {
      await res.body?.cancel().catch(() => undefined);
      throw new FeedSourceError(`${url} answered ${res.status}`);
    }
    const declared = Number(res.headers.get('content-length') ?? Number.NaN);
    if (declared > maxBytes) {
      await res.body?.cancel().catch(() => undefined);
      throw new FeedSourceError(`${url} is ${declared} bytes, more than ${maxBytes} (CONTROL_FEED_MAX_BYTES)`);
    }
    const chunks: Buffer[] = [];
    let total = 0;
    for await (const chunk of res.body ?? []) {
      total += (chunk as Uint8Array).byteLength;
      if (total > maxBytes) throw new FeedSourceError(`${url} sent more than ${maxBytes} bytes (CONTROL_FEED_MAX_BYTES)`);
      chunks.push(Buffer.from(chunk as Uint8Array));
    }
    return Buffer.concat(chunks, total);
  } catch (error) {
    if (error instanceof FeedSourceError) throw error;
    if (signal.aborted) throw new FeedSourceError(`${url} took longer than the feed read timeout (CONTROL_FEED_TIMEOUT_MS)`);
    const cause = (error as Error & { cause?: Error }).cause?.message;
    throw new FeedSourceError(`${url} could not be read: ${(error as Error).message}${cause ? ` (${cause})` : ''}`);
  }
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
