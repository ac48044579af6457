import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { enforcerEnv } from './config.js';

/** The two Envoy configurations of docs/envoy.md, parsed. */
const doc = readFileSync(new URL('../../../docs/envoy.md', import.meta.url), 'utf8');
const [httpConfig, grpcConfig] = [...doc.matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => parse(m[1]!) as EnvoyConfig);

interface Patterns {
  patterns: { exact?: string; prefix?: string }[];
}
interface EnvoyConfig {
  static_resources: {
    listeners: { filter_chains: { filters: { typed_config: { use_remote_address?: boolean; http_filters: { name: string; typed_config: Record<string, unknown> }[] } }[] }[] }[];
    clusters: {
      name: string;
      typed_extension_protocol_options?: unknown;
      load_assignment: { endpoints: { lb_endpoints: { endpoint: { address: { socket_address: { port_value: number } } } }[] }[] };
    }[];
  };
}

function extAuthz(config: EnvoyConfig | undefined) {
  const hcm = config!.static_resources.listeners[0]!.filter_chains[0]!.filters[0]!.typed_config;
  const filter = hcm.http_filters.find((f) => f.name === 'envoy.filters.http.ext_authz')!;
  return { hcm, filter: filter.typed_config as Record<string, unknown> };
}

function cluster(config: EnvoyConfig | undefined, name: string) {
  const found = config!.static_resources.clusters.find((c) => c.name === name);
  if (!found) throw new Error(`no cluster ${name}`);
  return { ...found, port: found.load_assignment.endpoints[0]!.lb_endpoints[0]!.endpoint.address.socket_address.port_value };
}

const matches = (list: Patterns | undefined, header: string) => (list?.patterns ?? []).some((p) => p.exact === header || (p.prefix !== undefined && header.startsWith(p.prefix)));

describe('the Envoy configurations in docs/envoy.md', () => {
  it('HTTP: asks the sidecar at its port and prefix, sends the client address and never the identity headers, lets the answer headers through', () => {
    const { hcm, filter } = extAuthz(httpConfig);
    const service = filter['http_service'] as { server_uri: { cluster: string }; path_prefix: string; authorization_response: Record<string, Patterns> };
    expect(service.path_prefix).toBe(enforcerEnv.ENFORCER_EXT_AUTHZ_PREFIX.default);
    expect(cluster(httpConfig, service.server_uri.cluster).port).toBe(enforcerEnv.HTTP_PORT.default);
    expect(hcm.use_remote_address).toBe(true);
    const allowed = filter['allowed_headers'] as Patterns;
    expect(matches(allowed, enforcerEnv.ENFORCER_CLIENT_IP_HEADER.default)).toBe(true);
    for (const identity of ['x-banstream-user', 'x-banstream-api-key']) expect(matches(allowed, identity)).toBe(false);
    for (const header of ['retry-after', 'ratelimit', 'ratelimit-policy', 'content-type']) expect(matches(service.authorization_response['allowed_client_headers'], header)).toBe(true);
    for (const header of ['ratelimit', 'ratelimit-policy']) expect(matches(service.authorization_response['allowed_client_headers_on_success'], header)).toBe(true);
  });

  it('gRPC: calls an HTTP/2 cluster, keeps the client identity headers out, and fails closed', () => {
    const { hcm, filter } = extAuthz(grpcConfig);
    const grpc = filter['grpc_service'] as { envoy_grpc: { cluster_name: string } };
    const target = cluster(grpcConfig, grpc.envoy_grpc.cluster_name);
    expect(JSON.stringify(target.typed_extension_protocol_options)).toContain('http2_protocol_options');
    expect(target.port).toBeGreaterThan(0);
    expect(doc).toContain(`ENFORCER_GRPC_PORT=${target.port}`);
    expect(hcm.use_remote_address).toBe(true);
    for (const identity of ['x-banstream-user', 'x-banstream-api-key']) expect(matches(filter['disallowed_headers'] as Patterns, identity)).toBe(true);
    expect([filter['transport_api_version'], filter['failure_mode_allow']]).toEqual(['V3', false]);
  });
});
