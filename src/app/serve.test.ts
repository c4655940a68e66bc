import { afterEach, describe, expect, it } from 'vitest';
import { openTestPlatform, TEST_SERVICE_BUILDERS, type TestPlatform } from '../../test/support/platform.ts';
import type { ServiceBuilders, ServiceName } from './compose.ts';
import { startPlatform, type RunningPlatform } from './serve.ts';

/** The test builders, counting how often `startPlatform` asked for each service. */
function countingBuilders(): { builders: ServiceBuilders; calls: Record<keyof ServiceBuilders, number> } {
  const calls = { modelPlane: 0, osv: 0, documents: 0, protos: 0 };
  const base = TEST_SERVICE_BUILDERS;
  return {
    calls,
    builders: {
      modelPlane: (core) => (calls.modelPlane++, base.modelPlane(core)),
      osv: (core) => (calls.osv++, base.osv(core)),
      documents: (core) => (calls.documents++, base.documents(core)),
      protos: () => (calls.protos++, base.protos()),
    },
  };
}

describe('platform serve --only: each listener gets only the selected services, each built once', () => {
  let platform: TestPlatform | undefined;
  let running: RunningPlatform | undefined;
  afterEach(async () => {
    await running?.close();
    await platform?.close();
    running = undefined;
    platform = undefined;
  });

  async function start(only: ServiceName[]) {
    platform = await openTestPlatform('sqlite', {
      env: { PLATFORM_HTTP_PORT: '0', PLATFORM_GRPC_PORT: '0', MCP_PORT: '0', DEV_FORGE_PORT: '0' },
    });
    const counting = countingBuilders();
    running = await startPlatform(platform.ctx, new Set(only), counting.builders);
    const rest = running.listeners.find((l) => l.name === 'rest');
    const token = platform.owner.platform_token;
    // Without a credential a mounted route answers 401, so 404 means the route is not there.
    const get = async (path: string, authorized = true) =>
      (await fetch(`${rest?.url}${path}`, { headers: authorized ? { authorization: `Bearer ${token}` } : {} })).status;
    return { p: platform, calls: counting.calls, names: running.listeners.map((l) => l.name), get };
  }

  it('--only admin builds neither PlatformOSV (nor its index) nor the gRPC server, and mounts no HTTP mapping', async () => {
    const { p, calls, names, get } = await start(['admin']);
    expect(calls).toEqual({ modelPlane: 1, osv: 0, documents: 0, protos: 0 });
    expect(names).toEqual(['rest']);
    expect(await get('/api/v1/admin/model_providers')).toBe(200);
    expect(await get('/platform/v1/osv/vulns/GHSA-0000-0000-0000', false)).toBe(404);
    expect(await get('/platform/v1/documents', false)).toBe(404);
    // The positive case below shows this line appears once the index is built.
    expect(p.logs.text()).not.toMatch(/OSV index built/);
  });

  it('--only admin,grpc builds each service once and serves one RPC set on both transports', async () => {
    const { p, calls, names, get } = await start(['admin', 'grpc']);
    expect(calls).toEqual({ modelPlane: 1, osv: 1, documents: 1, protos: 1 });
    expect(names).toEqual(['rest', 'grpc']);
    expect(await get('/platform/v1/documents')).toBe(200);
    expect(await get('/platform/v1/osv/vulns/GHSA-0000-0000-0000', false)).toBe(401);
    expect(await get('/api/v1/admin/model_providers')).toBe(200);
    await expect.poll(() => p.logs.text()).toMatch(/OSV index built/);
  });

  it('--only grpc mounts the HTTP mappings but not the admin API', async () => {
    const { calls, names, get } = await start(['grpc']);
    expect(calls).toEqual({ modelPlane: 0, osv: 1, documents: 1, protos: 1 });
    expect(names).toEqual(['rest', 'grpc']);
    expect(await get('/platform/v1/documents')).toBe(200);
    expect(await get('/api/v1/admin/model_providers', false)).toBe(404);
  });

  it('--only mcp,devforge builds none of the REST or gRPC services', async () => {
    const { calls, names } = await start(['mcp', 'devforge']);
    expect(calls).toEqual({ modelPlane: 0, osv: 0, documents: 0, protos: 0 });
    expect(names).not.toContain('rest');
    expect(names).not.toContain('grpc');
  });
});
