import { createRequire } from 'node:module';

/**
 * kafkajs 2.2.4 keeps using a connection whose request timed out. A broker cut off the
 * network closes nothing, so its sockets stay "connected": every retry, every metadata
 * refresh that picks it (brokerPool asks a random connected broker and keeps it for all
 * retries) and every fetch waits out another request timeout, and the client never
 * learns the partitions moved. The producer only refreshes metadata after a connection
 * or stale-metadata error, never after a request timeout.
 *
 * This does what the Java client does (NetworkClient disconnects a node whose request
 * timed out): on a request timeout the connection is closed, its other requests are
 * failed with a connection error (retriable, and kafkajs refreshes metadata on it), and
 * the next request reconnects, which fails fast against an unreachable broker, so a
 * metadata refresh goes to one that answers. Applied once per process by
 * installKafkaPatches().
 *
 * Only a connection that stayed silent is closed. kafkajs times requests out from a
 * timer, and timers run before the socket is read: an event loop held past the request
 * timeout (a long collection, a slow synchronous task) times out requests whose answers
 * are waiting unread. So the decision waits for setImmediate, after the loop has read
 * the socket, and a connection that received bytes in between is left open: its broker
 * is reachable, and kafkajs fails only the late request.
 */

/** The fields of kafkajs' Connection the patch uses (src/network/connection.js). */
interface ConnectionState {
  host: string;
  port: number;
  socket?: { destroy(): void; bytesRead?: number } | null;
  isConnected(): boolean;
  rejectRequests(error: Error): void;
  disconnect(): Promise<boolean>;
  send(request: unknown): Promise<unknown>;
}

const require = createRequire(import.meta.url);
const CONNECTION_MODULE = 'kafkajs/src/network/connection.js';
let applied = false;

/**
 * Patches kafkajs' Connection.send; returns whether it is patched. A kafkajs whose
 * Connection lacks the expected methods is left alone (false): a unit test pins it.
 */
export function fixKafkajsRequestTimeout(): boolean {
  if (applied) return true;
  const proto = kafkajsConnectionPrototype() as Partial<ConnectionState>;
  const { KafkaJSConnectionClosedError } = require('kafkajs/src/errors.js') as {
    KafkaJSConnectionClosedError?: new (message: string, details: { host: string; port: number }) => Error;
  };
  const send = proto.send;
  if (typeof send !== 'function' || typeof proto.rejectRequests !== 'function' || typeof proto.disconnect !== 'function' || !KafkaJSConnectionClosedError) {
    return false;
  }
  proto.send = async function sendClosingOnTimeout(this: ConnectionState, request: unknown): Promise<unknown> {
    const socket = this.socket;
    try {
      return await send.call(this, request);
    } catch (error) {
      if ((error as Error | undefined)?.name === 'KafkaJSRequestTimeoutError') {
        // Counted at the timeout, not at the send: bytes read before it (an earlier request's answer, the one that
        // freed this request's in-flight slot, an authentication) say nothing of whether the broker still answers.
        const readBefore = socket?.bytesRead;
        setImmediate(() => {
          // A timeout on a socket already replaced closes nothing; a second one while it closes only closes it again (harmless).
          if (this.socket !== socket || !this.isConnected() || socket?.bytesRead !== readBefore) return;
          closeTimedOutConnection(this, new KafkaJSConnectionClosedError('Closed connection after a request timed out', { host: this.host, port: this.port }));
        });
      }
      throw error;
    }
  };
  applied = true;
  return true;
}

/** Fails the connection's other requests, then drops the socket without waiting for a FIN the broker may never get. */
function closeTimedOutConnection(connection: ConnectionState, error: Error): void {
  connection.rejectRequests(error);
  const socket = connection.socket;
  // Its failures are kafkajs's to log; none may go unhandled.
  void connection
    .disconnect()
    .catch(() => undefined)
    .finally(() => socket?.destroy());
}

/** The Connection prototype (also for tests that drive send on a connection of their own). */
export function kafkajsConnectionPrototype(): object {
  return (require(CONNECTION_MODULE) as { prototype: object }).prototype;
}
