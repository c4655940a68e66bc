/**
 * `platform mcp --stdio` builds the production forge client from the same variables as /mcp (forge.http.test.ts):
 * a forge behind HTTPS with a certificate from a test CA is reached only when FORGE_CA_CERT_PATH names that CA, and
 * a CA file that cannot be used stops the command with one line.
 */
import { request as httpRequest } from 'node:http';
import { createServer, type Server } from 'node:https';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { Command } from 'commander';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { selfSignedCertificate } from '../../../test/support/tls.ts';
import { loadPlatformConfig } from '../../app/config.ts';
import { CliError } from '../../core/cli-io.ts';
import type { Env } from '../../core/config.ts';
import { startDevForge, type StartedDevForge } from '../../devforge/index.ts';
import { toolJson } from '../mcp.testkit.ts';
import { registerMcpLocalCommands } from './mcp-local.command.ts';
import { StreamClientTransport, tempDir } from './mcp-local.test-support.ts';

let forge: StartedDevForge;
let front: Server;
let forgeUrl = '';
let certPath = '';
let pat = '';
let tmp: Awaited<ReturnType<typeof tempDir>>;

beforeAll(async () => {
  forge = await startDevForge({
    users: [{ id: 1, username: 'tess', name: 'Tess Tls', email: 'tess@example.test', password: 'pw-tls-stdio-1' }],
    applications: [],
  });
  pat = forge.createPersonalAccessToken('tess', ['api']);
  tmp = await tempDir();
  const tls = selfSignedCertificate('Stdio Forge Test CA');
  certPath = tls.certPath;
  const target = new URL(forge.url);
  // The dev forge behind TLS, as a self-hosted GitLab behind its reverse proxy.
  front = createServer({ key: tls.key, cert: tls.cert }, (req, res) => {
    const upstream = httpRequest(
      { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.writeHead(502).end());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
  const address = front.address();
  forgeUrl = `https://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
});
afterAll(async () => {
  front.closeAllConnections();
  await new Promise((resolve) => front.close(resolve));
  await forge.close();
  await tmp.remove();
});

/** Runs `platform mcp --stdio` in process with `env`, calls get_current_user once, and ends the session. */
async function currentUserOverStdio(env: Env): Promise<{ code: number; result: unknown; err: string }> {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  const err: string[] = [];
  const program = new Command('platform').exitOverride();
  registerMcpLocalCommands(program, { env, out: () => undefined, err: (t) => void err.push(t) }, loadPlatformConfig, { stdin, stdout });
  const running = program.parseAsync(['mcp', '--stdio'], { from: 'user' }).then(
    () => 0,
    (error: unknown) => {
      if (error instanceof CliError) {
        err.push(error.message);
        return error.exitCode;
      }
      throw error;
    },
  );
  const client = new Client({ name: 'stdio-tls', version: '0' });
  const connected = await Promise.race([
    client.connect(new StreamClientTransport(stdin, stdout)).then(() => true),
    running.then(() => false),
  ]);
  if (!connected) return { code: await running, result: undefined, err: err.join('\n') };
  const result = await client.callTool({ name: 'get_current_user', arguments: {} });
  await client.close();
  return { code: await running, result, err: err.join('\n') };
}

const baseEnv = (): Env => ({
  FORGE_URL: forgeUrl,
  FORGE_PERSONAL_ACCESS_TOKEN: pat,
  LOG_LEVEL: 'silent',
  HOME: tmp.dir,
});

describe('platform mcp --stdio and a forge with its own CA', () => {
  it('[FORGE-SELF-HOSTED] reaches the TLS forge when FORGE_CA_CERT_PATH names the test CA', async () => {
    const run = await currentUserOverStdio({ ...baseEnv(), FORGE_CA_CERT_PATH: certPath });
    expect(run.code).toBe(0);
    expect((run.result as { isError?: boolean }).isError).toBeFalsy();
    expect(toolJson(run.result)).toMatchObject({ username: 'tess' });
  });

  it('[FORGE-SELF-HOSTED] without the CA the certificate is refused: an upstream tool error', async () => {
    const run = await currentUserOverStdio(baseEnv());
    expect(run.code).toBe(0);
    expect((run.result as { isError?: boolean }).isError).toBe(true);
    expect(toolJson(run.result)).toMatchObject({ error: { type: 'upstream', status: 0 } });
  });

  it('[FORGE-SELF-HOSTED] a CA file that is not there stops the command with one line naming the variable', async () => {
    const run = await currentUserOverStdio({ ...baseEnv(), FORGE_CA_CERT_PATH: join(tmp.dir, 'missing-ca.pem') });
    expect(run.code).toBe(1);
    expect(run.err).toMatch(/^FORGE_CA_CERT_PATH: cannot read /);
  });
});
