import { env, parseEnv, type Env, type EnvValues } from '../core/config.ts';

/** Variables of the gRPC listener and the RPC runtime shared with the HTTP mappings. */
export const grpcEnvSpec = {
  /** The longest any RPC may run, on either transport; a shorter gRPC client deadline wins. */
  PLATFORM_RPC_DEADLINE_MS: env.integer(60_000, 10, 3_600_000),
  /** How long a graceful shutdown waits for gRPC calls in flight before cancelling them. */
  PLATFORM_GRPC_SHUTDOWN_TIMEOUT_MS: env.integer(10_000, 0, 600_000),
} as const;

export type GrpcConfig = EnvValues<typeof grpcEnvSpec>;

export function parseGrpcConfig(source: Env): GrpcConfig {
  return parseEnv(grpcEnvSpec, source);
}
