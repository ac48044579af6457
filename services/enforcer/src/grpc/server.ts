import { Server, ServerCredentials, status, type sendUnaryData, type ServerUnaryCall } from '@grpc/grpc-js';
import { BanstreamError, type Cidr } from '@banstream/core';
import type { Logger } from '@banstream/platform';
import type { Enforcer } from '../enforcer.js';
import { isTrustedAddress } from '../http/forwarded.js';
import type { ForwardedHeaderNames } from '../http/original-request.js';
import { askedFromCheck } from './check-request.js';
import { checkResponse, refusedResponse } from './check-response.js';
import { Deadlines } from './deadlines.js';
import type { CheckRequest, CheckResponse } from './messages.js';
import { authorizationService } from './protos.js';

export interface CheckServerOptions {
  enforcer: Enforcer;
  /** The only peers answered (ENFORCER_TRUSTED_PROXIES): a CheckRequest's source address and headers are believed. */
  trustedProxies: readonly Cidr[];
  names: ForwardedHeaderNames;
  /** The largest CheckRequest read (ENFORCER_GRPC_MAX_MESSAGE_BYTES); larger ones fail RESOURCE_EXHAUSTED unread. */
  maxMessageBytes: number;
  /** How long a call may wait for its decision (ENFORCER_GRPC_DEADLINE_MS); then DEADLINE_EXCEEDED. */
  deadlineMs: number;
  logger: Logger;
}

export interface CheckServer {
  port: number;
  stop(): Promise<void>;
}

type Answer = sendUnaryData<CheckResponse>;

/**
 * `envoy.service.auth.v3.Authorization/Check` on `host:port` (port 0: any free one), for
 * Envoy's gRPC ext_authz filter: each CheckRequest decided by the enforcer, answered as
 * check-response.ts says. A peer outside `trustedProxies` is refused PERMISSION_DENIED
 * as an RPC error before its message is read for a decision: whoever calls chooses the
 * address and identity checked, as a caller of POST /v1/check does.
 */
export async function startCheckServer(host: string, port: number, options: CheckServerOptions): Promise<CheckServer> {
  const { enforcer, trustedProxies, names, logger } = options;
  const deadlines = new Deadlines<Answer>(options.deadlineMs, (answer) =>
    answer({ code: status.DEADLINE_EXCEEDED, details: `no decision within ENFORCER_GRPC_DEADLINE_MS (${options.deadlineMs} ms)` }),
  );
  const server = new Server({
    'grpc.max_receive_message_length': options.maxMessageBytes,
    // Answers are a few headers and a problem body.
    'grpc.max_send_message_length': 64 * 1024,
  });

  const check = (call: ServerUnaryCall<CheckRequest, CheckResponse>, answer: Answer): void => {
    const peer = peerAddress(call.getPeer());
    if (!isTrustedAddress(peer, trustedProxies)) {
      answer({ code: status.PERMISSION_DENIED, details: `Authorization/Check answers only ENFORCER_TRUSTED_PROXIES; ${peer} is not one of them` });
      return;
    }
    let asked;
    try {
      asked = askedFromCheck(call.request, names);
    } catch (error) {
      refuse(error, answer);
      return;
    }
    deadlines.add(answer);
    enforcer.check(asked).then(
      (decision) => {
        if (deadlines.settle(answer)) answer(null, checkResponse(decision));
      },
      (error: unknown) => {
        if (deadlines.settle(answer)) refuse(error, answer);
      },
    );
  };

  const refuse = (error: unknown, answer: Answer): void => {
    // What the client sent (a bad address, a context value) is the client's 400; anything else is ours.
    if (error instanceof BanstreamError && (error.code === 'CHECK_REQUEST_INVALID' || error.code.startsWith('SUBJECT_'))) {
      answer(null, refusedResponse(error.code, error.message));
      return;
    }
    logger.error({ err: error }, 'Authorization/Check failed');
    answer({ code: status.INTERNAL, details: 'the check failed; see the enforcer log' });
  };

  const { service } = authorizationService();
  server.addService(service, { Check: check });
  const bound = await new Promise<number>((resolve, reject) =>
    server.bindAsync(`${host.includes(':') ? `[${host}]` : host}:${port}`, ServerCredentials.createInsecure(), (error, actual) => (error ? reject(error) : resolve(actual))),
  );
  deadlines.start();
  return {
    port: bound,
    stop: () =>
      new Promise<void>((resolve) => {
        deadlines.stop();
        // Calls in flight finish; a client that keeps its connection open is cut after a second.
        const force = setTimeout(() => server.forceShutdown(), 1000);
        server.tryShutdown(() => {
          clearTimeout(force);
          resolve();
        });
      }),
  };
}

/** grpc-js names a peer `address:port` (no brackets for IPv6): the address. */
export function peerAddress(peer: string): string {
  const colon = peer.lastIndexOf(':');
  return colon > 0 && /^\d+$/.test(peer.slice(colon + 1)) ? peer.slice(0, colon) : peer;
}
