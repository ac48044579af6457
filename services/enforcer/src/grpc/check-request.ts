import { BanstreamError, tryParseIp } from '@banstream/core';
import { withProxyIdentity, type AskedRequest, type ForwardedHeaderNames } from '../http/original-request.js';
import type { CheckRequest, HeaderValue } from './messages.js';

/** The bounds POST /v1/check puts on the same fields. */
const MAX_METHOD = 16;
const MAX_HOST = 253;
const MAX_PATH = 8192;

const SOURCE = 'attributes.source.address.socket_address.address';
const HTTP = 'attributes.request.http';

/**
 * The request an Envoy CheckRequest asks about. The caller is a trusted proxy (the
 * server checked its peer), so, as GET /v1/auth does for one, the client address is
 * believed (the source socket address: Envoy's downstream client, after its own
 * X-Forwarded-For handling), and the user, API key and context from the headers
 * `names` configures. What a check cannot go without (an HTTP request, its method and
 * path, an IP source address) or a field over the bounds of POST /v1/check is refused
 * with CHECK_REQUEST_INVALID naming the field.
 */
export function askedFromCheck(message: CheckRequest, names: ForwardedHeaderNames): AskedRequest {
  const attributes = message.attributes;
  const http = attributes?.request?.http;
  if (!http) throw invalid(HTTP, 'is missing: banstream answers the HTTP ext_authz filter only, not the network one');
  const address = attributes?.source?.address;
  if (address?.pipe) throw invalid('attributes.source.address', 'is a Unix socket (pipe): no client IP address to check');
  const ip = address?.socket_address?.address;
  if (!ip) throw invalid(SOURCE, 'is missing');
  if (!tryParseIp(ip)) throw invalid(SOURCE, `${shown(ip)} is not an IP address`);
  const method = bounded(`${HTTP}.method`, http.method, MAX_METHOD);
  const path = bounded(`${HTTP}.path`, http.path, MAX_PATH);
  const headers = http.headers && Object.keys(http.headers).length > 0 ? http.headers : fromHeaderMap(http.header_map?.headers);
  // Envoy fills `host`; a client that does not may still send the authority as a header.
  const host = http.host || headers[':authority'] || headers.host || '';
  if (host.length > MAX_HOST) throw invalid(`${HTTP}.host`, `is ${host.length} characters, over ${MAX_HOST}`);
  return withProxyIdentity({ ip, method, host, path, headers }, headers, names);
}

function bounded(field: string, value: string | undefined, max: number): string {
  if (!value) throw invalid(field, 'is missing');
  if (value.length > max) throw invalid(field, `is ${value.length} characters, over ${max}`);
  return value;
}

/** Headers sent as a list (the filter's encode_raw_headers), joined per name as Node joins repeated headers. */
function fromHeaderMap(list: readonly HeaderValue[] | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const h of list ?? []) {
    if (!h.key) continue;
    const key = h.key.toLowerCase();
    // raw_value is bytes; latin1 reads them as Node's HTTP parser reads header bytes.
    const value = h.raw_value && h.raw_value.length > 0 ? Buffer.from(h.raw_value).toString('latin1') : (h.value ?? '');
    headers[key] = key in headers ? `${headers[key]}, ${value}` : value;
  }
  return headers;
}

function shown(value: string): string {
  return value.length > 64 ? `${JSON.stringify(value.slice(0, 64))}… (${value.length} characters)` : JSON.stringify(value);
}

function invalid(field: string, reason: string): BanstreamError {
  return new BanstreamError('CHECK_REQUEST_INVALID', `CheckRequest ${field} ${reason}`, { details: { field, reason } });
}
