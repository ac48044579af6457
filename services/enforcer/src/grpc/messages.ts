/**
 * The CheckRequest and CheckResponse of envoy.service.auth.v3 as @grpc/proto-loader
 * gives and takes them (protos.ts: field names as in the .proto, absent fields absent).
 * Only what banstream reads or writes; everything read is optional, as protobuf makes it.
 */
export interface HeaderValue {
  key?: string;
  value?: string;
  raw_value?: Uint8Array;
}

export interface CheckRequest {
  attributes?: {
    source?: { address?: { socket_address?: { address?: string; port_value?: number }; pipe?: { path?: string } } };
    request?: {
      http?: {
        method?: string;
        headers?: Record<string, string>;
        header_map?: { headers?: HeaderValue[] };
        path?: string;
        host?: string;
      };
    };
  };
}

/** HeaderValueOption.HeaderAppendAction.OVERWRITE_IF_EXISTS_OR_ADD: ours replaces any the upstream set. */
export const OVERWRITE_IF_EXISTS_OR_ADD = 2;

export interface HeaderValueOption {
  header: { key: string; value: string };
  append_action: number;
}

export interface CheckResponse {
  status: { code: number; message?: string };
  ok_response?: { response_headers_to_add: HeaderValueOption[] };
  denied_response?: { status: { code: number }; headers: HeaderValueOption[]; body: string };
}

/** google.rpc.Code values used here. */
export const GRPC_OK = 0;
export const GRPC_INVALID_ARGUMENT = 3;
export const GRPC_PERMISSION_DENIED = 7;
