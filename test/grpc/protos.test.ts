// The public protos compile with the standard tools (issue 12, item 1): `buf build`, `buf lint` with buf.yaml's
// rules, and Debian's `protoc`; and protoc compiles them to the same descriptors the server embeds and reflects.
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync, appendFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { clone, fromBinary, toJson } from '@bufbuild/protobuf';
import { FileDescriptorProtoSchema, FileDescriptorSetSchema } from '@bufbuild/protobuf/wkt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SERVED_FILES } from '../../src/grpc/descriptors.ts';
import { PROTO_ROOT, REPOSITORY_ROOT } from '../../src/grpc/proto-files.ts';
import { bufBinary } from '../../src/grpc/proto-gen.ts';

const run = promisify(execFile);
const PROTOC = '/usr/bin/protoc';
/** The served files as protoc is given them (their imports are found under proto/ and protoc's include dir). */
const SERVED_PROTOS = SERVED_FILES.map((f) => f.proto.name);

async function buf(args: string[], cwd = REPOSITORY_ROOT): Promise<{ code: number; output: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [bufBinary(), ...args], { cwd });
    return { code: 0, output: stdout + stderr };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : -1, output: `${e.stdout ?? ''}${e.stderr ?? ''}` };
  }
}

describe('the public protos with the standard tools', () => {
  let dir: string;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'protos-'));
  });

  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('`buf build` accepts them, as the workspace and as `buf build proto`', { timeout: 60_000 }, async () => {
    expect(await buf(['build'])).toEqual({ code: 0, output: '' });
    expect(await buf(['build', 'proto'])).toEqual({ code: 0, output: '' });
  });

  it('`buf lint` accepts them with buf.yaml, and still catches a violation of the kept rules', { timeout: 60_000 }, async () => {
    expect(await buf(['lint'])).toEqual({ code: 0, output: '' });
    // The same configuration over a copy with one message misnamed: the STANDARD rules are really applied.
    const copy = join(dir, 'lint');
    cpSync(PROTO_ROOT, join(copy, 'proto'), { recursive: true });
    writeFileSync(join(copy, 'buf.yaml'), readFileSync(join(REPOSITORY_ROOT, 'buf.yaml')));
    appendFileSync(join(copy, 'proto/platform/v1/documents.proto'), '\nmessage bad_name {}\n');
    const linted = await buf(['lint'], copy);
    expect(linted.code).not.toBe(0);
    expect(linted.output).toContain('Message name "bad_name" should be PascalCase');
  });

  it.skipIf(!existsSync(PROTOC) && process.env.CI !== 'true')(
    "Debian's protoc compiles them to the descriptors the server embeds",
    async () => {
      const out = join(dir, 'protoc.binpb');
      await run(PROTOC, [`-I${PROTO_ROOT}`, '--include_imports', `--descriptor_set_out=${out}`, ...SERVED_PROTOS], {
        cwd: REPOSITORY_ROOT,
      });
      const compiled = new Map(fromBinary(FileDescriptorSetSchema, readFileSync(out)).file.map((f) => [f.name, f]));
      expect([...compiled.keys()]).toEqual(
        expect.arrayContaining([
          'platform/v1/osv.proto',
          'platform/v1/documents.proto',
          'google/api/annotations.proto',
          'grpc/health/v1/health.proto',
        ]),
      );
      for (const file of SERVED_FILES) {
        const fromProtoc = compiled.get(file.proto.name);
        if (!fromProtoc) throw new Error(`protoc did not compile ${file.proto.name}`);
        const withoutSource = clone(FileDescriptorProtoSchema, fromProtoc);
        withoutSource.sourceCodeInfo = undefined;
        expect(toJson(FileDescriptorProtoSchema, withoutSource), file.proto.name).toEqual(toJson(FileDescriptorProtoSchema, file.proto));
      }
    },
  );
});
