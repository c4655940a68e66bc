// The import progress display: a bar with records/s on a terminal, a plain periodic line elsewhere.
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { progressView } from './osv.command.ts';

function io() {
  const err: string[] = [];
  return { io: { env: {}, out: () => undefined, err: (t: string) => err.push(t) }, err };
}

describe('[OSV-IMPORT-SOURCES] import progress', () => {
  it('writes a plain line at most every 5 seconds when stderr is not a terminal', () => {
    const { io: cli, err } = io();
    const stream = Object.assign(new PassThrough(), { isTTY: false }) as unknown as NodeJS.WriteStream;
    const view = progressView(cli, 20_000, false, stream);
    view.update({ read: 1000, written: 0, invalid: 0, elapsedMs: 1000 });
    view.update({ read: 6000, written: 5000, invalid: 2, elapsedMs: 6000 });
    view.update({ read: 7000, written: 5000, invalid: 2, elapsedMs: 7000 });
    view.update({ read: 12_000, written: 10_000, invalid: 3, elapsedMs: 12_000 });
    view.stop();
    expect(err).toEqual([
      'importing: 6000/20000 records read, 5000 written, 2 invalid, 1000 records/s',
      'importing: 12000/20000 records read, 10000 written, 3 invalid, 1000 records/s',
    ]);
  });

  it('draws a bar with records/s on a terminal, and nothing when quiet', async () => {
    const { io: cli, err } = io();
    const chunks: string[] = [];
    const stream = Object.assign(new PassThrough(), {
      isTTY: true,
      columns: 160,
      cursorTo: () => true,
      clearLine: () => true,
      moveCursor: () => true,
    }) as unknown as NodeJS.WriteStream;
    stream.on('data', (c: Buffer) => chunks.push(c.toString()));
    const view = progressView(cli, 100, false, stream);
    view.update({ read: 50, written: 0, invalid: 1, elapsedMs: 500 });
    view.stop();
    await new Promise((r) => setImmediate(r));
    expect(chunks.join('')).toMatch(/50\/100 records \| 100 records\/s \| 1 invalid/u);
    expect(err).toEqual([]);
    const quiet = progressView(cli, 100, true, stream);
    quiet.update({ read: 50, written: 0, invalid: 0, elapsedMs: 60_000 });
    expect(err).toEqual([]);
  });
});
