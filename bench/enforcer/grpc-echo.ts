/**
 * The ceiling of the gRPC benchmark: a bare grpc-js unary server answering each call
 * with the message it was sent, `bench.Echo/Echo` on `message Echo { bytes payload = 1; }`,
 * loaded by @grpc/proto-loader as the enforcer's protos are. Run as its own process
 * (ECHO_SERVER, PORT in the environment); echoClient calls it.
 */
import { credentials, loadPackageDefinition, type Client, type ServiceClientConstructor } from '@grpc/grpc-js';
import { fromJSON } from '@grpc/proto-loader';

const ECHO_PROTO = {
  nested: {
    bench: {
      nested: {
        Echo: { fields: { payload: { type: 'bytes', id: 1 } } },
        EchoService: { methods: { Echo: { requestType: 'Echo', responseType: 'Echo' } } },
      },
    },
  },
};

export const ECHO_SERVER = `
import { Server, ServerCredentials, loadPackageDefinition } from '@grpc/grpc-js';
import { fromJSON } from '@grpc/proto-loader';
const loaded = loadPackageDefinition(fromJSON(${JSON.stringify(ECHO_PROTO)}));
const server = new Server();
server.addService(loaded.bench.EchoService.service, { Echo: (call, answer) => answer(null, call.request) });
server.bindAsync('127.0.0.1:' + process.env.PORT, ServerCredentials.createInsecure(), (error) => { if (error) throw error; });
`;

export function echoClient(address: string): { client: Client; call: (payload: Buffer, done: (error: Error | null) => void) => void; ready: () => Promise<void> } {
  const loaded = loadPackageDefinition(fromJSON(ECHO_PROTO as Parameters<typeof fromJSON>[0]));
  const Echo = (loaded.bench as never)['EchoService'] as ServiceClientConstructor;
  const client = new Echo(address, credentials.createInsecure()) as unknown as Client & { Echo(r: { payload: Buffer }, cb: (e: Error | null) => void): void };
  return {
    client,
    call: (payload, done) => client.Echo({ payload }, done),
    ready: () => new Promise((resolve, reject) => client.waitForReady(Date.now() + 30_000, (e) => (e ? reject(e) : resolve()))),
  };
}
