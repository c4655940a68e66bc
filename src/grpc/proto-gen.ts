import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { PLATFORM_PROTO_FILES, PROTO_ROOT, REPOSITORY_ROOT } from './proto-files.ts';

/** Where `npm run proto:gen` writes the generated TypeScript types (ignored by eslint, checked for freshness). */
export const GENERATED_DIR = join(REPOSITORY_ROOT, 'src/grpc/generated');

/**
 * The arguments of `proto-loader-gen-types`: the same field conventions as `LOADER_OPTIONS`, doc comments from the
 * protos, and `.ts` import specifiers so the output type-checks under NodeNext without a build step.
 * Paths are relative to the repository root, so the output (which names its source files) is the same everywhere.
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

/** Runs the generator into `outDir` (from the repository root); throws with its output when it fails. */
export function generateProtoTypes(outDir: string): void {
  const require = createRequire(import.meta.url);
  const bin = require.resolve('@grpc/proto-loader/build/bin/proto-loader-gen-types.js');
  const result = spawnSync(process.execPath, [bin, ...protoGenArgs(outDir)], { cwd: REPOSITORY_ROOT, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`proto-loader-gen-types failed:\n${result.stdout}\n${result.stderr}`);
}

// `npm run proto:gen`: regenerate from scratch so types of removed messages disappear too.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  rmSync(GENERATED_DIR, { recursive: true, force: true });
  generateProtoTypes(GENERATED_DIR);
  console.log(`generated ${relative(REPOSITORY_ROOT, GENERATED_DIR)}`);
}
