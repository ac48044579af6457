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

/**
 * The request nginx or Envoy asks about (GET /v1/auth), from the headers they forward.
 * The client's address, user, API key, country, region, ASN and route are believed
 * only from a trusted proxy (`proxies`, the socket's peer), and only from the headers
 * configured for them: from anyone else the address is the peer itself and there is
 * none of the others, whatever headers it sent. A context value that is not one
 * (contextValue) is refused.
 */
export function originalRequest(request: FastifyRequest, proxies: SocketTrust, trusted: readonly Cidr[], names: ForwardedHeaderNames): AskedRequest {
  const peer = request.socket.remoteAddress ?? '';
  const proxied = proxies.trusts(request.socket);
  const asked: AskedRequest = {
    ip: proxied ? forwardedClient(peer, header(request, names.clientIp), trusted) : peer,
    method: header(request, 'x-original-method') ?? header(request, 'x-forwarded-method') ?? 'GET',
    host: header(request, 'x-forwarded-host') ?? header(request, 'host') ?? '',
    path: header(request, 'x-original-uri') ?? header(request, 'x-envoy-original-path') ?? '/',
    headers: request.headers,
  };
  if (!proxied) return asked;
  const userId = names.user === '' ? undefined : header(request, names.user);
  if (userId) asked.userId = userId;
  const apiKey = names.apiKey === '' ? undefined : header(request, names.apiKey);
  if (apiKey) asked.apiKey = apiKey;
  // None configured by default: four tests of an empty name.
  if (names.country !== '') asked.country = context(request, 'country', names.country);
  if (names.region !== '') asked.region = context(request, 'region', names.region);
  if (names.asn !== '') {
    const asn = context(request, 'asn', names.asn);
    if (asn !== undefined) asked.asn = Number(asn);
  }
  if (names.route !== '') asked.route = context(request, 'route', names.route);
  return asked;
}

function context(request: FastifyRequest, scope: ContextScope, name: string): string | undefined {
  const value = header(request, name);
  return value ? contextValue(scope, name, value) : undefined;
}

function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value.join(',') : value;
}
