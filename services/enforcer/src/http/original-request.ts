import type { FastifyRequest } from 'fastify';
import type { Cidr, RequestInput } from '@banstream/core';
import type { ContextScope } from '../context-scopes.js';
import { contextValue } from './context-headers.js';
import { forwardedClient, type SocketTrust } from './forwarded.js';

/** The headers a trusted proxy tells the sidecar the client with, lower case. */
export interface ForwardedHeaderNames {
  /** The client address (ENFORCER_CLIENT_IP_HEADER): this one header, never "whichever is present". */
  clientIp: string;
  /** The user the proxy authenticated (ENFORCER_USER_HEADER); empty: none is read. */
  user: string;
  /** The API key the proxy checked, in clear (ENFORCER_API_KEY_HEADER); empty: none is read. */
  apiKey: string;
  /** The client's country, region and ASN as the proxy located it, the route it matched (ENFORCER_COUNTRY_HEADER…); empty: none is read. */
  country: string;
  region: string;
  asn: string;
  route: string;
}

/**
 * Names a proxy would not pass through from a client by accident, as it might a
 * client's own X-User-Id or X-Api-Key.
 */
export const DEFAULT_HEADER_NAMES: Readonly<ForwardedHeaderNames> = {
  clientIp: 'x-forwarded-for',
  user: 'x-banstream-user',
  apiKey: 'x-banstream-api-key',
  country: '',
  region: '',
  asn: '',
  route: '',
};

export type AskedRequest = Omit<RequestInput, 'timestamp'>;

/** Request headers as Node (or a CheckRequest's map) gives them: lower-case names. */
export type HeaderBag = Readonly<Record<string, string | string[] | undefined>>;

/**
 * The request nginx asks about (GET /v1/auth), from the headers it forwards.
 * The client's address, user, API key, country, region, ASN and route are believed
 * only from a trusted proxy (`proxies`, the socket's peer), and only from the headers
 * configured for them: from anyone else the address is the peer itself and there is
 * none of the others, whatever headers it sent. A context value that is not one
 * (contextValue) is refused.
 */
export function originalRequest(request: FastifyRequest, proxies: SocketTrust, trusted: readonly Cidr[], names: ForwardedHeaderNames): AskedRequest {
  const headers = request.headers;
  return askedThrough(request, proxies, trusted, names, {
    method: header(headers, 'x-original-method') ?? header(headers, 'x-forwarded-method') ?? 'GET',
    host: header(headers, 'x-forwarded-host') ?? header(headers, 'host') ?? '',
    path: header(headers, 'x-original-uri') ?? header(headers, 'x-envoy-original-path') ?? '/',
  });
}

/**
 * The request Envoy's HTTP ext_authz asks about: its own method, and its path after
 * `prefix` (the filter's path_prefix), the host its Host header. The client and its
 * identity as for GET /v1/auth: from a trusted proxy's configured headers only.
 */
export function extAuthzRequest(request: FastifyRequest, prefix: string, proxies: SocketTrust, trusted: readonly Cidr[], names: ForwardedHeaderNames): AskedRequest {
  const rest = request.url.slice(prefix.length);
  return askedThrough(request, proxies, trusted, names, {
    method: request.method,
    host: header(request.headers, 'host') ?? '',
    path: rest.startsWith('/') ? rest : `/${rest}`,
  });
}

function askedThrough(request: FastifyRequest, proxies: SocketTrust, trusted: readonly Cidr[], names: ForwardedHeaderNames, target: Pick<AskedRequest, 'method' | 'host' | 'path'>): AskedRequest {
  const peer = request.socket.remoteAddress ?? '';
  const proxied = proxies.trusts(request.socket);
  const asked: AskedRequest = {
    ip: proxied ? forwardedClient(peer, header(request.headers, names.clientIp), trusted) : peer,
    method: target.method,
    host: target.host,
    path: target.path,
    headers: request.headers,
  };
  return proxied ? withProxyIdentity(asked, request.headers, names) : asked;
}

/**
 * `asked` with the user, API key, country, region, ASN and route a trusted proxy put in
 * the headers `names` configures; the caller has checked that the proxy is one.
 */
export function withProxyIdentity(asked: AskedRequest, headers: HeaderBag, names: ForwardedHeaderNames): AskedRequest {
  const userId = names.user === '' ? undefined : header(headers, names.user);
  if (userId) asked.userId = userId;
  const apiKey = names.apiKey === '' ? undefined : header(headers, names.apiKey);
  if (apiKey) asked.apiKey = apiKey;
  // None configured by default: four tests of an empty name.
  if (names.country !== '') asked.country = context(headers, 'country', names.country);
  if (names.region !== '') asked.region = context(headers, 'region', names.region);
  if (names.asn !== '') {
    const asn = context(headers, 'asn', names.asn);
    if (asn !== undefined) asked.asn = Number(asn);
  }
  if (names.route !== '') asked.route = context(headers, 'route', names.route);
  return asked;
}

function context(headers: HeaderBag, scope: ContextScope, name: string): string | undefined {
  const value = header(headers, name);
  return value ? contextValue(scope, name, value) : undefined;
}

function header(headers: HeaderBag, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value.join(',') : value;
}
