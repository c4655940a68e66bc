import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { PLATFORM_PROTO_FILES, PROTO_ROOT, REPOSITORY_ROOT } from './proto-files.ts';

/** Where `npm run proto:gen` writes the generated TypeScript (ignored by eslint, checked for freshness). */
export const GENERATED_DIR = join(REPOSITORY_ROOT, 'src/grpc/generated');
/** protoc-gen-es's output (buf.gen.yaml): message types, schemas and the compiled file descriptors. */
export const ES_GENERATED_DIR = join(GENERATED_DIR, 'es');

const require = createRequire(import.meta.url);

/** The `buf` binary of the `@bufbuild/buf` npm package (its platform package ships it: nothing is downloaded). */
export function bufBinary(): string {
  return require.resolve('@bufbuild/buf/bin/buf');
}

/** Runs `buf` with `args` from the repository root; throws with its output when it fails. */
export function runBuf(args: readonly string[]): string {
  const result = spawnSync(process.execPath, [bufBinary(), ...args], { cwd: REPOSITORY_ROOT, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`buf ${args.join(' ')} failed:\n${result.stdout}\n${result.stderr}`);
  return result.stdout;
}

/**
 * The arguments of `proto-loader-gen-types`, whose types describe the objects of grpc-js clients built with
 * proto-loader (tests and benchmarks use such clients, as an outside caller would): proto field names, 64-bit
 * integers and enums as strings, bytes as Buffers, the virtual oneof field, doc comments from the protos, and `.ts` import specifiers so the output type-checks under
 * NodeNext without a build step. Paths are relative to the repository root, so the output (which names its source
 * files) is the same everywhere.
 */
export function protoGenArgs(outDir: string): string[] {
  return [
    '--keepCase',
    '--longs=String',
    '--enums=String',
    '--bytes=Buffer',
    '--oneofs',
    '--includeComments',
    '--grpcLib=@grpc/grpc-js',
    '--importFileExtension=.ts',
    `--includeDirs=${relative(REPOSITORY_ROOT, PROTO_ROOT) || '.'}`,
    `--outDir=${outDir}`,
    ...PLATFORM_PROTO_FILES,
  ];
}

/**
 * Runs both generators with `outBase` standing for the repository root: protoc-gen-es through `buf generate`
 * (buf.gen.yaml) into `outBase/src/grpc/generated/es`, and proto-loader-gen-types into the rest of
 * `outBase/src/grpc/generated`. Throws with a generator's output when it fails.
 */
export function generateProtoCode(outBase: string): void {
  runBuf(['generate', '--template', 'buf.gen.yaml', '--output', outBase]);
  const outDir = join(outBase, relative(REPOSITORY_ROOT, GENERATED_DIR));
  const bin = require.resolve('@grpc/proto-loader/build/bin/proto-loader-gen-types.js');
  const result = spawnSync(process.execPath, [bin, ...protoGenArgs(outDir)], { cwd: REPOSITORY_ROOT, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`proto-loader-gen-types failed:\n${result.stdout}\n${result.stderr}`);
}

// `npm run proto:gen`: regenerate from scratch so the code of removed messages disappears too.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  rmSync(GENERATED_DIR, { recursive: true, force: true });
  generateProtoCode(REPOSITORY_ROOT);
  console.log(`generated ${relative(REPOSITORY_ROOT, GENERATED_DIR)}`);
}
