import { parseAdminConfig, type AdminConfig } from '../admin/admin.config.ts';
import { ConfigError, collectConfig, type Env } from '../core/config.ts';
import { parseCoreConfig, type CoreConfig } from '../core/config.core.ts';
import { parseDocumentsConfig, type DocumentsConfig } from '../documents/documents.config.ts';
import { parseGrpcConfig, type GrpcConfig } from '../grpc/grpc.config.ts';
import { parseMcpConfig, type McpConfig } from '../mcp/mcp.config.ts';
import { parseOsvConfig, type OsvConfig } from '../osv/osv.config.ts';

/**
 * The whole platform's configuration: the core variables plus each service's own spec. Every spec is parsed
 * before anything starts, and all problems are reported together, one line each.
 */
export interface PlatformConfig {
  core: CoreConfig;
  grpc: GrpcConfig;
  documents: DocumentsConfig;
  admin: AdminConfig;
  mcp: McpConfig;
  osv: OsvConfig;
}

export function loadPlatformConfig(source: Env): PlatformConfig {
  const problems: string[] = [];
  const core = collectConfig(() => parseCoreConfig(source), problems);
  const grpc = collectConfig(() => parseGrpcConfig(source), problems);
  const documents = collectConfig(() => parseDocumentsConfig(source), problems);
  const admin = collectConfig(() => parseAdminConfig(source), problems);
  const mcp = collectConfig(() => parseMcpConfig(source), problems);
  const osv = collectConfig(() => parseOsvConfig(source), problems);
  if (problems.length > 0 || !core || !grpc || !documents || !admin || !mcp || !osv) throw new ConfigError(problems);
  return Object.freeze({ core, grpc, documents, admin, mcp, osv });
}
