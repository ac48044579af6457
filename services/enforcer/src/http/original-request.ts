import type { FastifyRequest } from 'fastify';
import type { Cidr, RequestInput } from '@banstream/core';
import { forwardedClient, type SocketTrust } from './forwarded.js';

/** The headers a trusted proxy tells the sidecar the client with, lower case. */
export interface ForwardedHeaderNames {
  /** The client address (ENFORCER_CLIENT_IP_HEADER): this one header, never "whichever is present". */
  clientIp: string;
  /** The user the proxy authenticated (ENFORCER_USER_HEADER); empty: none is read. */
  user: string;
  /** The API key the proxy checked, in clear (ENFORCER_API_KEY_HEADER); empty: none is read. */
  apiKey: string;
}

/**
 * Names a proxy would not pass through from a client by accident, as it might a
 * client's own X-User-Id or X-Api-Key.
 */
export const DEFAULT_HEADER_NAMES: Readonly<ForwardedHeaderNames> = { clientIp: 'x-forwarded-for', user: 'x-banstream-user', apiKey: 'x-banstream-api-key' };

export type AskedRequest = Omit<RequestInput, 'timestamp'>;

/**
 * The request nginx or Envoy asks about (GET /v1/auth), from the headers they forward.
 * The client's address, user and API key are believed only from a trusted proxy
 * (`proxies`, the socket's peer): from anyone else the address is the peer itself
 * and there is no user or key, whatever headers it sent.
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
  return asked;
}

function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value.join(',') : value;
}
