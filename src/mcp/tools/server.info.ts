/** Server identity and the protocol revisions served: read by get_server_info and by the server factory. */

/** Server identity announced to clients. */
export const SERVER_INFO = { name: 'platform-forge-mcp', version: '0.1.0' } as const;

/** The protocol revisions `/mcp` serves (mcp.transport.ts). */
export const PROTOCOL_VERSIONS = ['2026-07-28', '2025-11-25', '2025-06-18'] as const;
