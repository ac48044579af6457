import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadPackageDefinition, type ServiceClientConstructor, type ServiceDefinition } from '@grpc/grpc-js';
import { loadSync, type Options } from '@grpc/proto-loader';
import protobuf from 'protobufjs';

/** services/enforcer/proto, from src/grpc and dist/grpc alike (package.json "files" ships it). */
export const PROTO_DIR = fileURLToPath(new URL('../../proto/', import.meta.url));
const FILE = 'envoy/service/auth/v3/external_auth.proto';

/**
 * Field names as the .proto spells them (`socket_address`), 64-bit integers as strings,
 * enums as numbers, absent fields absent (no defaults filled in: a missing address is
 * told from an empty one), the set member of a oneof named.
 */
const LOADER_OPTIONS: Options = { keepCase: true, longs: String, enums: Number, defaults: false, oneofs: true, includeDirs: [PROTO_DIR] };

/**
 * `envoy.service.auth.v3.Authorization`, for servers (`service`) and clients (the
 * constructor), from the project's own subset of Envoy's protos. The server's
 * CheckRequest is decoded by protobufjs alone, without proto-loader's copy into a plain
 * object: that copy cost more than the rest of a check (bench/enforcer/grpc.ts). An
 * absent field then reads as its default (`''`, `{}`, null), which check-request.ts
 * treats as absent.
 */
export function authorizationService(): { service: ServiceDefinition; Client: ServiceClientConstructor } {
  const loaded = loadPackageDefinition(loadSync(FILE, LOADER_OPTIONS));
  const Client = (loaded.envoy as never)['service']['auth']['v3']['Authorization'] as ServiceClientConstructor;
  const root = new protobuf.Root();
  // protobufjs ships the google/protobuf types itself; everything else is ours.
  root.resolvePath = (_origin, target) => (target.startsWith('google/protobuf/') ? target : join(PROTO_DIR, target));
  root.loadSync(FILE, { keepCase: true });
  const CheckRequest = root.lookupType('envoy.service.auth.v3.CheckRequest');
  const check = Client.service.Check!;
  return { service: { ...Client.service, Check: { ...check, requestDeserialize: (bytes: Buffer) => CheckRequest.decode(bytes) } }, Client };
}
