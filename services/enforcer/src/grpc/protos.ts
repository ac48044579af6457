import { fileURLToPath } from 'node:url';
import { loadPackageDefinition, type ServiceClientConstructor, type ServiceDefinition } from '@grpc/grpc-js';
import { loadSync, type Options } from '@grpc/proto-loader';

/** services/enforcer/proto, from src/grpc and dist/grpc alike (package.json "files" ships it). */
export const PROTO_DIR = fileURLToPath(new URL('../../proto/', import.meta.url));

/**
 * Field names as the .proto spells them (`socket_address`), 64-bit integers as strings,
 * enums as numbers, absent fields absent (no defaults filled in: a missing address is
 * told from an empty one), the set member of a oneof named.
 */
const LOADER_OPTIONS: Options = { keepCase: true, longs: String, enums: Number, defaults: false, oneofs: true, includeDirs: [PROTO_DIR] };

/** `envoy.service.auth.v3.Authorization`, for servers (`service`) and clients (the constructor), from the project's own subset of Envoy's protos. */
export function authorizationService(): { service: ServiceDefinition; Client: ServiceClientConstructor } {
  const loaded = loadPackageDefinition(loadSync('envoy/service/auth/v3/external_auth.proto', LOADER_OPTIONS));
  const Client = (loaded.envoy as never)['service']['auth']['v3']['Authorization'] as ServiceClientConstructor;
  return { service: Client.service, Client };
}
