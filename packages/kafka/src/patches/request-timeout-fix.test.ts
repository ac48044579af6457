import { createRequire } from 'node:module';
import { type Server, type Socket, createServer } from 'node:net';
import { Worker } from 'node:worker_threads';
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

/**
 * A broker on a thread of its own that answers every request 100 ms later with a frame
 * of the request's correlation id: it answers while the test's own event loop is held.
 */
async function answeringBroker(): Promise<{ port: number; stop: () => Promise<number> }> {
  const worker = new Worker(
    `
    const { createServer } = require('node:net');
    const { parentPort } = require('node:worker_threads');
    const server = createServer((socket) => {
      socket.on('error', () => {});
      socket.on('data', (data) => {
        // One request per chunk is enough here: ApiVersions, whose correlation id follows size, api key and version.
        const answer = Buffer.alloc(10);
        answer.writeInt32BE(6, 0);
        data.copy(answer, 4, 8, 12);
        setTimeout(() => socket.write(answer), 100);
      });
    });
    server.listen(0, '127.0.0.1', () => parentPort.postMessage(server.address().port));
    `,
    { eval: true },
  );
  const port = await new Promise<number>((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
  return { port, stop: () => worker.terminate() };
}

/** A broker that answers the first request on each connection 50 ms later (ApiVersions v0, no versions), then goes silent: cut off after one answer. */
async function brokerSilentAfterOneAnswer(): Promise<Awaited<ReturnType<typeof silentBroker>>> {
  const broker = await silentBroker();
  broker.server.on('connection', (socket) => {
    socket.once('data', (data) => {
      const answer = Buffer.alloc(14);
      answer.writeInt32BE(10, 0);
      data.copy(answer, 4, 8, 12); // the correlation id
      setTimeout(() => socket.write(answer), 50); // error code 0, an empty array of versions
    });
  });
  return broker;
}

/** Holds this thread's event loop for `ms`, as a long synchronous task does. */
function holdEventLoop(ms: number): void {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    // busy: no timer, socket or promise of this thread runs meanwhile
  }
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

  it('leaves open a connection whose answer arrived while the event loop was held past the timeout: the broker is reachable', async () => {
    fixKafkajsRequestTimeout();
    const answering = await answeringBroker();
    try {
      const connection = kafkajsConnection(answering.port);
      await connection.connect();
      const late = connection.send(apiVersionsRequest());
      // The answer arrives 100 ms in, during the hold. Held in the check phase, the loop next runs its timers (kafkajs's
      // timeout, 150 ms) and only then reads the socket, as after a hold in any I/O callback.
      setTimeout(() => setImmediate(() => holdEventLoop(400)), 20);
      await expect(late).rejects.toMatchObject({ name: 'KafkaJSRequestTimeoutError' });
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(connection.isConnected()).toBe(true);
    } finally {
      await answering.stop();
    }
  });

  it('closes a connection that went silent after answering an earlier request: bytes read before the timeout do not count', async () => {
    fixKafkajsRequestTimeout();
    broker = await brokerSilentAfterOneAnswer();
    const connection = kafkajsConnection(broker.port);
    await connection.connect();
    const answered = connection.send(apiVersionsRequest());
    const unanswered = connection.send(apiVersionsRequest());
    const waiting = connection.send({ ...(apiVersionsRequest() as object), requestTimeout: 60_000 });
    await expect(answered).resolves.toBeDefined();
    await expect(unanswered).rejects.toMatchObject({ name: 'KafkaJSRequestTimeoutError' });
    await expect(waiting).rejects.toMatchObject({ name: 'KafkaJSConnectionClosedError' });
    expect(connection.isConnected()).toBe(false);
  });
});
