import { createRequire } from 'node:module';
import { type Server, type Socket, createServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { fixKafkajsRequestTimeout, kafkajsConnectionPrototype } from './request-timeout-fix.js';

const require = createRequire(import.meta.url);

interface Connection {
  connect(): Promise<boolean>;
  send(args: unknown): Promise<unknown>;
  isConnected(): boolean;
}

/** A "broker" that accepts connections and never answers: a cut broker as a client sees it. */
async function silentBroker(): Promise<{ server: Server; port: number; sockets: Socket[]; closed: () => number }> {
  const sockets: Socket[] = [];
  let closed = 0;
  const server = createServer((socket) => {
    sockets.push(socket);
    socket.on('close', () => void closed++);
    socket.on('error', () => {});
    socket.resume(); // reads (and drops) requests, so it sees the client's FIN
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('silent broker has no TCP port');
  return { server, port: address.port, sockets, closed: () => closed };
}

/** A kafkajs Connection of its own (the one every broker of a client uses), with a 150 ms request timeout. */
function kafkajsConnection(port: number): Connection {
  const Connection = require('kafkajs/src/network/connection.js') as new (options: object) => Connection;
  const { createLogger, LEVELS } = require('kafkajs/src/loggers/index.js') as {
    createLogger(options: object): unknown;
    LEVELS: { NOTHING: number };
  };
  const socketFactory = (require('kafkajs/src/network/socketFactory.js') as () => unknown)();
  return new Connection({
    host: '127.0.0.1',
    port,
    logger: createLogger({ level: LEVELS.NOTHING, logCreator: () => () => {} }),
    socketFactory,
    requestTimeout: 150,
    connectionTimeout: 1_000,
  });
}

/** ApiVersions v0, the first request kafkajs sends to any broker. */
function apiVersionsRequest(): unknown {
  const { protocol } = require('kafkajs/src/protocol/requests/apiVersions/index.js') as {
    protocol(options: { version: number }): () => object;
  };
  return protocol({ version: 0 })();
}

let broker: Awaited<ReturnType<typeof silentBroker>> | undefined;
afterEach(async () => {
  for (const socket of broker?.sockets ?? []) socket.destroy();
  await new Promise<void>((resolve) => (broker ? broker.server.close(() => resolve()) : resolve()));
  broker = undefined;
});

describe('fixKafkajsRequestTimeout', () => {
  it('patches the installed kafkajs (a kafkajs upgrade that changes Connection fails here)', () => {
    expect(fixKafkajsRequestTimeout()).toBe(true);
    expect(fixKafkajsRequestTimeout()).toBe(true);
    expect((kafkajsConnectionPrototype() as { send: { name: string } }).send.name).toBe('sendClosingOnTimeout');
  });

  it('closes a connection whose request timed out, failing its other requests: kafkajs 2.2.4 kept it open and kept using it', async () => {
    fixKafkajsRequestTimeout();
    broker = await silentBroker();
    const connection = kafkajsConnection(broker.port);
    await connection.connect();
    const first = connection.send(apiVersionsRequest());
    const second = connection.send({ ...(apiVersionsRequest() as object), requestTimeout: 60_000 });
    await expect(first).rejects.toMatchObject({ name: 'KafkaJSRequestTimeoutError' });
    // The other request fails now with a retriable connection error, not after its own 60 s.
    await expect(second).rejects.toMatchObject({ name: 'KafkaJSConnectionClosedError', retriable: true });
    expect(connection.isConnected()).toBe(false);
    await expect.poll(() => broker?.closed()).toBe(1);
    // The next request reconnects rather than waiting on the dead socket.
    await connection.connect();
    expect(connection.isConnected()).toBe(true);
    expect(broker.sockets).toHaveLength(2);
  });
});
