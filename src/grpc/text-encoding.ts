// Node's own UTF-8 routines for the generated codec, through @bufbuild/protobuf's documented hook for them
// (`configureTextEncoding`). Its default encodes every string field with `TextEncoder.encode`, whose per-call cost
// dominates for the many short strings of an OSV record, and checks well-formed text by calling
// `encodeURIComponent` (building the escaped string to throw it away). `Buffer.from(text, 'utf8')` writes the same
// bytes (both are the WHATWG UTF-8 encoder: a lone surrogate becomes U+FFFD) at a fraction of the cost, and
// `isWellFormed` answers the same question without building anything. Decoding is left as the runtime does it.
// What it buys: `npm run bench:osv -- --only codec` prints the cost of a record's stored answers with both;
// test/grpc/codec-differential.test.ts checks both give the same bytes.
import { configureTextEncoding, getTextEncoding } from '@bufbuild/protobuf/wire';

type TextEncoding = ReturnType<typeof getTextEncoding>;

// ES2024's String.prototype.isWellFormed (Node >= 20), which the ES2023 lib of this project does not declare.
type WellFormedText = string & { isWellFormed(): boolean };

/** The runtime's own text encoding, as it was before this module replaced it (for comparisons in tests and benches). */
export const runtimeTextEncoding: TextEncoding = getTextEncoding();

/** The runtime's decoder with Node's encoder and well-formedness check. */
export const nodeTextEncoding: TextEncoding = {
  decodeUtf8: runtimeTextEncoding.decodeUtf8,
  encodeUtf8: (text) => Buffer.from(text, 'utf8'),
  checkUtf8: (text) => (text as WellFormedText).isWellFormed(),
};

/** Makes the generated codec use `nodeTextEncoding` in this process (src/grpc/codec.ts does so when loaded). */
export function useNodeTextEncoding(): void {
  configureTextEncoding(nodeTextEncoding);
}
