import { createServer } from 'node:net';

// Linux hands out 32768–60999 to outgoing connections by default, macOS and Windows 49152–65535.
const LOW = 20_000;
const HIGH = 32_767;
const ATTEMPTS = 64;

/**
 * A TCP port on `host` that is free now, for a server whose public URL must be known before it listens (the forge
 * registers the MCP callback first). Asking the kernel for port 0 and closing it races: that port comes from the
 * ephemeral range every outgoing connection also draws from, so a client socket can take it before the server
 * listens (CI saw `EADDRINUSE` that way). A random port below every default ephemeral range is never given to a
 * client socket; it is lost only if another caller draws the same one in between.
 */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const port = LOW + Math.floor(Math.random() * (HIGH - LOW + 1));
    if (await bindsNow(host, port)) return port;
  }
  throw new Error(`no free port on ${host} in ${LOW}–${HIGH} after ${ATTEMPTS} attempts`);
}

function bindsNow(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolve(true)));
  });
}
