import { existsSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve, sep } from 'node:path';
import { Tokenizer } from '@huggingface/tokenizers';
import { Tiktoken, type TiktokenBPE } from 'js-tiktoken/lite';
import type { TokenCounter } from '../wires/wire.types.ts';

/**
 * Local input token counting (spec: "token_counter": input estimation, history fitting, compaction planning),
 * selected by a model's composed `token_counter`:
 *  - `bpe`: an OpenAI BPE encoding shipped with js-tiktoken, exact for the supplied text;
 *  - `hub`: a Hugging Face `tokenizer.json` installed under `PLATFORM_TOKENIZER_DIR/<tokenizer_id>/` before start,
 *    read by @huggingface/tokenizers, exact for the supplied text;
 *  - `anchored`: an encoding's count times the decimal `safety_factor`, rounded up (inexact by design);
 *  - null: the byte estimate.
 * A counter whose asset is missing or invalid is unavailable, with the reason, and nothing else is substituted
 * (spec: "no other counter is selected silently"). Nothing is ever downloaded: the deployment prepares the assets.
 * Provider framing and media are not counted here; the caller adds its chat allowance.
 */

export interface TextCounter {
  readonly kind: 'bpe' | 'hub' | 'anchored' | 'bytes';
  /** True when the count is the model's own for the supplied text (bpe, hub). */
  readonly exact: boolean;
  count(text: string): number;
  /**
   * An upper bound on `count` of any text of `utf8Bytes` UTF-8 bytes, when one exists without reading the text:
   * fitting skips counting a request whose bound already fits (most requests are far inside a context window).
   * Absent for hub tokenizers, whose normalizers may expand text (NFKC turns one 3-byte character into several).
   */
  readonly atMost?: (utf8Bytes: number) => number;
}

export type CounterResolution = { available: true; counter: TextCounter } | { available: false; reason: string };

/**
 * Bytes per token of the byte estimate. English prose averages about 4 UTF-8 bytes per token on current encodings
 * and code or non-Latin text fewer, so 3 errs toward counting high, the safe side for fitting a context window.
 */
export const BYTES_PER_TOKEN = 3;

const require = createRequire(import.meta.url);

/**
 * The part of @huggingface/tokenizers' `Tokenizer` used here. The package's declaration files import each other
 * without file extensions, which NodeNext resolution cannot follow, so its class type resolves to nothing; this
 * interface states what is relied on (and the tests exercise it).
 */
interface HubTokenizer {
  encode(text: string, options: { add_special_tokens: boolean }): { ids: number[] };
}
const HubTokenizerClass = Tokenizer as unknown as new (tokenizerJson: object, tokenizerConfig: object) => HubTokenizer;

/** The encodings js-tiktoken ships, by the name a definition uses (BPE_ENCODINGS in ../catalog/wires.ts). */
const RANK_MODULES: Readonly<Record<string, string>> = {
  cl100k_base: 'js-tiktoken/ranks/cl100k_base',
  o200k_base: 'js-tiktoken/ranks/o200k_base',
  p50k_base: 'js-tiktoken/ranks/p50k_base',
  r50k_base: 'js-tiktoken/ranks/r50k_base',
};

const encoders = new Map<string, Tiktoken | string>();

/**
 * The js-tiktoken encoder of an encoding, built on first use and kept for the process (building o200k_base takes
 * seconds, encoding then takes microseconds), or why it cannot be built.
 */
export function bpeEncoder(encoding: string): Tiktoken | string {
  let hit = encoders.get(encoding);
  if (hit === undefined) {
    const module = Object.hasOwn(RANK_MODULES, encoding) ? RANK_MODULES[encoding] : undefined;
    if (!module) {
      hit = `the BPE encoding ${encoding} is not shipped with this deployment`;
    } else {
      try {
        const ranks = require(module) as TiktokenBPE | { default: TiktokenBPE };
        hit = new Tiktoken('default' in ranks ? ranks.default : ranks);
      } catch (error) {
        hit = `the BPE encoding ${encoding} could not be loaded: ${error instanceof Error ? error.message : String(error)}`;
      }
    }
    encoders.set(encoding, hit);
  }
  return hit;
}

/** Counts with a js-tiktoken encoder, treating special-token text as ordinary text (it is user input, not control). */
function bpeCount(encoder: Tiktoken, text: string): number {
  return encoder.encode(text, [], []).length;
}

/** `ceil(count × factor)` with the decimal factor applied exactly (no binary floating point). */
export function anchoredCount(count: number, safetyFactor: string): number {
  const [whole = '0', fraction = ''] = safetyFactor.split('.');
  const scale = 10n ** BigInt(fraction.length);
  const numerator = BigInt(whole) * scale + BigInt(fraction === '' ? '0' : fraction);
  const product = BigInt(count) * numerator;
  return Number((product + scale - 1n) / scale);
}

const bytesCounter: TextCounter = {
  kind: 'bytes',
  exact: false,
  count: (text) => Math.ceil(Buffer.byteLength(text, 'utf8') / BYTES_PER_TOKEN),
  atMost: (bytes) => Math.ceil(bytes / BYTES_PER_TOKEN),
};

/** Byte-level BPE (every js-tiktoken encoding): each token stands for at least one byte of the text. */
const bpeAtMost = (bytes: number) => bytes;

/** The directory of a tokenizer id under `dir`, or undefined when the id would leave it. */
function tokenizerPath(dir: string, tokenizerId: string): string | undefined {
  if (tokenizerId.split('/').some((segment) => segment === '' || segment === '.' || segment === '..')) return undefined;
  const root = resolve(dir);
  const path = resolve(root, tokenizerId);
  return path.startsWith(root + sep) ? path : undefined;
}

export interface TokenCountersDeps {
  /** `PLATFORM_TOKENIZER_DIR`; undefined when the deployment installed no tokenizer files. */
  tokenizerDir: string | undefined;
  /** Told once per tokenizer id that cannot be used, with the reason (the model plane logs it). */
  onUnavailable?: (tokenizerId: string, reason: string) => void;
}

/**
 * The counters of one process. Hub tokenizers are read on first use and kept (with their failure, if any): the
 * files are prepared before start, so a process reads each at most once.
 */
export function createTokenCounters(deps: TokenCountersDeps) {
  const hub = new Map<string, CounterResolution>();

  function loadHub(tokenizerId: string): CounterResolution {
    if (deps.tokenizerDir === undefined)
      return { available: false, reason: 'PLATFORM_TOKENIZER_DIR is not set, so no hub tokenizer is installed' };
    const dir = tokenizerPath(deps.tokenizerDir, tokenizerId);
    if (!dir) return { available: false, reason: 'the tokenizer_id does not name a directory inside PLATFORM_TOKENIZER_DIR' };
    const file = join(dir, 'tokenizer.json');
    if (!existsSync(file) || !statSync(file).isFile()) return { available: false, reason: `${file} is not installed` };
    try {
      const json = JSON.parse(readFileSync(file, 'utf8')) as object;
      const configFile = join(dir, 'tokenizer_config.json');
      const config = existsSync(configFile) ? (JSON.parse(readFileSync(configFile, 'utf8')) as object) : {};
      const tokenizer = new HubTokenizerClass(json, config);
      // A file that parses but cannot tokenize is as unusable as a missing one: find out now, not on first use.
      tokenizer.encode('probe', { add_special_tokens: false });
      return {
        available: true,
        counter: { kind: 'hub', exact: true, count: (text) => tokenizer.encode(text, { add_special_tokens: false }).ids.length },
      };
    } catch (error) {
      return {
        available: false,
        reason: `${file} is not a usable tokenizer: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`,
      };
    }
  }

  return {
    /** The counter a composed `token_counter` selects, or why it is unavailable. */
    resolve(spec: TokenCounter | null): CounterResolution {
      if (spec === null) return { available: true, counter: bytesCounter };
      if (spec.kind === 'hub') {
        let hit = hub.get(spec.tokenizer_id);
        if (!hit) {
          hit = loadHub(spec.tokenizer_id);
          hub.set(spec.tokenizer_id, hit);
          if (!hit.available) deps.onUnavailable?.(spec.tokenizer_id, hit.reason);
        }
        return hit;
      }
      const encoder = bpeEncoder(spec.encoding);
      if (typeof encoder === 'string') return { available: false, reason: encoder };
      if (spec.kind === 'bpe')
        return { available: true, counter: { kind: 'bpe', exact: true, count: (text) => bpeCount(encoder, text), atMost: bpeAtMost } };
      const factor = spec.safety_factor;
      return {
        available: true,
        counter: {
          kind: 'anchored',
          exact: false,
          count: (text) => anchoredCount(bpeCount(encoder, text), factor),
          // anchoredCount is monotonic in the count, and the count is at most the bytes.
          atMost: (bytes) => anchoredCount(bpeAtMost(bytes), factor),
        },
      };
    },

    /** Whether a counter can be built, without building a BPE encoder (its encodings ship with the code). */
    available(spec: TokenCounter | null): boolean {
      if (spec === null) return true;
      if (spec.kind === 'hub') return this.resolve(spec).available;
      return Object.hasOwn(RANK_MODULES, spec.encoding);
    },
  };
}

/** @public the service's shape, for callers that hold one */
export type TokenCounters = ReturnType<typeof createTokenCounters>;
