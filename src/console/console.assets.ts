import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, extname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants as zlib, gzipSync } from 'node:zlib';

/** One file of the console, read once at start with its validator and its compressed forms. */
export interface ConsoleAsset {
  body: Buffer;
  /** Compressed only when it saves bytes; absent otherwise. */
  br?: Buffer;
  gzip?: Buffer;
  contentType: string;
  etag: string;
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
};

/** The console's own files: plain ES modules, CSS and HTML served as they are in the repository (no build step). */
export const CONSOLE_PUBLIC_DIR = join(dirname(fileURLToPath(import.meta.url)), 'public');

/** The browser build of `yaml` (already a server dependency), so the definition editor parses YAML in the page. */
function yamlBrowserDir(): string {
  const entry = createRequire(import.meta.url).resolve('yaml');
  // `yaml` resolves to <package>/dist/index.js for Node; its ES module build for browsers is <package>/browser/dist.
  return join(dirname(dirname(entry)), 'browser', 'dist');
}

function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...filesUnder(path));
    else out.push(path);
  }
  return out;
}

function asset(body: Buffer, contentType: string): ConsoleAsset {
  const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
  const result: ConsoleAsset = { body, contentType, etag };
  // Compressed once at start (the whole console is a few hundred kB), so a request costs no CPU beyond the copy.
  if (!contentType.startsWith('image/png') && body.length > 512) {
    const br = brotliCompressSync(body, { params: { [zlib.BROTLI_PARAM_QUALITY]: 11 } });
    const gzip = gzipSync(body, { level: 9 });
    if (br.length < body.length) result.br = br;
    if (gzip.length < body.length) result.gzip = gzip;
  }
  return result;
}

function addDir(assets: Map<string, ConsoleAsset>, dir: string, prefix: string): void {
  for (const path of filesUnder(dir)) {
    const type = TYPES[extname(path)];
    // Only known types are served, so a stray file (a map, a .d.ts) never goes out with a guessed type.
    if (type === undefined) continue;
    const rel = relative(dir, path).split(sep).join('/');
    assets.set(`${prefix}${rel}`, asset(readFileSync(path), type));
  }
}

/**
 * Every file the console serves, keyed by its path under `/console/`: the console's own folder and the YAML parser
 * under `vendor/yaml/`. Read once; a changed file needs a restart, as the server code does.
 */
export function loadConsoleAssets(publicDir: string = CONSOLE_PUBLIC_DIR): ReadonlyMap<string, ConsoleAsset> {
  const assets = new Map<string, ConsoleAsset>();
  addDir(assets, publicDir, '');
  addDir(assets, yamlBrowserDir(), 'vendor/yaml/');
  return assets;
}
