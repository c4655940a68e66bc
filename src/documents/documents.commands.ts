import { readFile, writeFile } from 'node:fs/promises';
import { basename } from 'node:path';
import type { Command } from 'commander';
import { CliError, printJson, type CliIo } from '../core/cli-io.ts';
import {
  DocumentsClientError,
  createDocumentsHttpClient,
  decryptDocument,
  encryptDocument,
  encryptedPartsOf,
  generateDocumentKey,
  readKeyFile,
  writeKeyFile,
  type DocumentKey,
  type DocumentsHttpClient,
} from './documents.client.ts';

const DEFAULT_URL = 'http://127.0.0.1:8080';

/** Runs a command body, turning client errors into one-line CLI errors. */
async function run<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    if (error instanceof DocumentsClientError) throw new CliError(error.message);
    throw error;
  }
}

function clientFrom(io: CliIo): DocumentsHttpClient {
  const token = io.env.PLATFORM_TOKEN?.trim();
  if (!token) throw new CliError('PLATFORM_TOKEN is not set: export a platform-plane token with the document capabilities');
  const baseUrl = io.env.PLATFORM_URL?.trim() || DEFAULT_URL;
  if (!/^https?:\/\//.test(baseUrl)) throw new CliError(`PLATFORM_URL must be an http:// or https:// URL, got ${JSON.stringify(baseUrl)}`);
  return createDocumentsHttpClient({ baseUrl, token });
}

async function loadKey(io: CliIo, path: string): Promise<DocumentKey> {
  const { key, loose } = await readKeyFile(path);
  if (loose) io.err(`warning: ${path} is readable by other users; restrict it with chmod 600`);
  return key;
}

/**
 * `platform documents keygen|put|list|get|delete`: client-side encrypted documents over the HTTP mapping of
 * PlatformDocuments at `PLATFORM_URL` (default http://127.0.0.1:8080) with `PLATFORM_TOKEN`. Keys stay on the
 * client (docs/documents.md).
 */
export function registerDocumentsCommands(program: Command, io: CliIo): void {
  const documents = program
    .command('documents')
    .description(`client-side encrypted documents (server: PLATFORM_URL, default ${DEFAULT_URL}; token: PLATFORM_TOKEN)`);

  documents
    .command('keygen')
    .description('create a new 256-bit document key in a file readable only by you (0600)')
    .requiredOption('--out <keyfile>', 'where to write the key (must not exist)')
    .option('--json', 'print one JSON object {key_file, key_id}')
    .action(async (opts: { out: string; json?: boolean }) => {
      const key = generateDocumentKey();
      await run(() => writeKeyFile(opts.out, key));
      if (opts.json) return printJson(io, { key_file: opts.out, key_id: key.id });
      io.out(`Wrote key ${key.id} to ${opts.out} (mode 0600). Back it up: without it, its documents cannot be decrypted.`);
    });

  documents
    .command('put')
    .description('encrypt a file locally and upload it; prints the new document id')
    .argument('<file>', 'the file to upload')
    .requiredOption('--key-file <keyfile>', 'the key to encrypt with (see `documents keygen`)')
    .option('--name <name>', 'name stored (encrypted) with the document (default: the file name)')
    .option('--json', 'print one JSON object {id, size_bytes, key_id, create_time}')
    .action(async (file: string, opts: { keyFile: string; name?: string; json?: boolean }) => {
      const client = clientFrom(io);
      const key = await run(() => loadKey(io, opts.keyFile));
      let plaintext: Buffer;
      try {
        plaintext = await readFile(file);
      } catch (error) {
        throw new CliError(`cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
      }
      const encrypted = encryptDocument(key, plaintext, { name: opts.name ?? basename(file), size: plaintext.length });
      const created = await run(() => client.create(encrypted));
      if (opts.json)
        return printJson(io, { id: created.id, size_bytes: created.size_bytes ?? '0', key_id: key.id, create_time: created.create_time });
      io.out(created.id);
    });

  documents
    .command('list')
    .description("list the organization's documents (names only with --key-file, since they are encrypted)")
    .option('--key-file <keyfile>', 'decrypt the names of documents encrypted with this key')
    .option('--json', 'print a JSON array of {id, creator_id, size_bytes, create_time, key_id, name?}')
    .action(async (opts: { keyFile?: string; json?: boolean }) => {
      const client = clientFrom(io);
      const key = opts.keyFile ? await run(() => loadKey(io, opts.keyFile as string)) : undefined;
      const rows: { id: string; creator_id: string; size_bytes: string; create_time: string; key_id: string; name?: string }[] = [];
      await run(async () => {
        for await (const doc of client.listAll()) {
          let name: string | undefined;
          if (key && doc.encryption?.key_id === key.id) {
            try {
              name = decryptDocument(key, encryptedPartsOf(doc)).metadata.name;
            } catch {
              name = undefined;
            }
          }
          rows.push({
            id: doc.id,
            creator_id: doc.creator_id,
            size_bytes: doc.size_bytes ?? '0',
            create_time: doc.create_time,
            key_id: doc.encryption?.key_id ?? '',
            ...(name === undefined ? {} : { name }),
          });
        }
      });
      if (opts.json) return printJson(io, rows);
      if (rows.length === 0) io.out('No documents.');
      for (const r of rows)
        io.out(
          `${r.id}  ${r.size_bytes.padStart(10)} B  ${r.create_time}  key=${r.key_id || '-'}${r.name === undefined ? '' : `  ${r.name}`}`,
        );
    });

  documents
    .command('get')
    .description('download a document and decrypt it locally into a file')
    .argument('<id>', 'the document id')
    .requiredOption('--key-file <keyfile>', 'the key the document was encrypted with')
    .requiredOption('--out <file>', 'where to write the plaintext (must not exist unless --force)')
    .option('--force', 'overwrite --out if it exists')
    .option('--json', 'print one JSON object {id, out, size, name}')
    .action(async (id: string, opts: { keyFile: string; out: string; force?: boolean; json?: boolean }) => {
      const client = clientFrom(io);
      const key = await run(() => loadKey(io, opts.keyFile));
      const doc = await run(() => client.find(id));
      if (!doc) throw new CliError(`no document ${id} in this organization`);
      const { plaintext, metadata } = await run(async () => decryptDocument(key, encryptedPartsOf(doc)));
      try {
        await writeFile(opts.out, plaintext, { mode: 0o600, flag: opts.force ? 'w' : 'wx' });
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        throw new CliError(
          code === 'EEXIST'
            ? `${opts.out} already exists (use --force to overwrite)`
            : `cannot write ${opts.out}: ${code ?? String(error)}`,
        );
      }
      if (opts.json)
        return printJson(io, {
          id,
          out: opts.out,
          size: plaintext.length,
          ...(metadata.name === undefined ? {} : { name: metadata.name }),
        });
      io.out(`Wrote ${plaintext.length} bytes to ${opts.out}${metadata.name ? ` (${metadata.name})` : ''}.`);
    });

  documents
    .command('delete')
    .description('delete a document for good')
    .argument('<id>', 'the document id')
    .option('--json', 'print one JSON object {id, deleted}')
    .action(async (id: string, opts: { json?: boolean }) => {
      const client = clientFrom(io);
      await run(() => client.remove(id));
      if (opts.json) return printJson(io, { id, deleted: true });
      io.out(`Document ${id} deleted.`);
    });
}
