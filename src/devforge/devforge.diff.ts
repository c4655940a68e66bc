/**
 * Line diffs for the dev forge's repository (commit diffs, compare, blame): an LCS over lines after trimming the
 * common head and tail, rendered as git's unified diff with three lines of context. A test double's diff: exact,
 * not fast; a middle part above {@link MAX_CELLS} comparisons is shown as all removed then all added, as a real
 * diff of unrelated text would be.
 */

/** One line of a diff: kept (`' '`), removed (`'-'`) or added (`'+'`), with its 0-based index on each side. */
export interface DiffLine {
  kind: ' ' | '-' | '+';
  text: string;
  /** Index in the old text (kept and removed lines). */
  oldIndex?: number;
  /** Index in the new text (kept and added lines). */
  newIndex?: number;
}

const MAX_CELLS = 4_000_000;

/** The lines of a text; a final newline does not start an extra empty line. */
export function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/** The line-by-line edit from `a` to `b`. */
export function diffLines(a: readonly string[], b: readonly string[]): DiffLine[] {
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head += 1;
  let endA = a.length;
  let endB = b.length;
  while (endA > head && endB > head && a[endA - 1] === b[endB - 1]) {
    endA -= 1;
    endB -= 1;
  }
  const out: DiffLine[] = [];
  for (let i = 0; i < head; i += 1) out.push({ kind: ' ', text: a[i] ?? '', oldIndex: i, newIndex: i });
  const n = endA - head;
  const m = endB - head;
  if (n * m > MAX_CELLS) {
    for (let i = head; i < endA; i += 1) out.push({ kind: '-', text: a[i] ?? '', oldIndex: i });
    for (let j = head; j < endB; j += 1) out.push({ kind: '+', text: b[j] ?? '', newIndex: j });
  } else {
    // lcs[i][j]: the longest common subsequence of a[head+i..endA) and b[head+j..endB).
    const width = m + 1;
    const lcs = new Uint32Array((n + 1) * width);
    for (let i = n - 1; i >= 0; i -= 1)
      for (let j = m - 1; j >= 0; j -= 1)
        lcs[i * width + j] =
          a[head + i] === b[head + j]
            ? (lcs[(i + 1) * width + j + 1] ?? 0) + 1
            : Math.max(lcs[(i + 1) * width + j] ?? 0, lcs[i * width + j + 1] ?? 0);
    let i = 0;
    let j = 0;
    while (i < n || j < m) {
      if (i < n && j < m && a[head + i] === b[head + j]) {
        out.push({ kind: ' ', text: a[head + i] ?? '', oldIndex: head + i, newIndex: head + j });
        i += 1;
        j += 1;
      } else if (j < m && (i === n || (lcs[i * width + j + 1] ?? 0) >= (lcs[(i + 1) * width + j] ?? 0))) {
        out.push({ kind: '+', text: b[head + j] ?? '', newIndex: head + j });
        j += 1;
      } else {
        out.push({ kind: '-', text: a[head + i] ?? '', oldIndex: head + i });
        i += 1;
      }
    }
  }
  for (let k = 0; k < a.length - endA; k += 1) out.push({ kind: ' ', text: a[endA + k] ?? '', oldIndex: endA + k, newIndex: endB + k });
  // Removals before additions inside each changed run, as git prints them.
  return reorderRuns(out);
}

function reorderRuns(lines: DiffLine[]): DiffLine[] {
  const out: DiffLine[] = [];
  let removed: DiffLine[] = [];
  let added: DiffLine[] = [];
  const flush = () => {
    out.push(...removed, ...added);
    removed = [];
    added = [];
  };
  for (const line of lines) {
    if (line.kind === '-') removed.push(line);
    else if (line.kind === '+') added.push(line);
    else {
      flush();
      out.push(line);
    }
  }
  flush();
  return out;
}

/** git's unified diff body (hunks only, no `---`/`+++` header, as GitLab's `diff` field holds it). */
export function unifiedDiff(oldText: string, newText: string, context = 3): string {
  const lines = diffLines(splitLines(oldText), splitLines(newText));
  const changed = lines.map((l, i) => (l.kind === ' ' ? -1 : i)).filter((i) => i >= 0);
  if (changed.length === 0) return '';
  // Hunks: changed lines with `context` kept lines around them, merged when they touch.
  const ranges: [number, number][] = [];
  for (const index of changed) {
    const start = Math.max(0, index - context);
    const end = Math.min(lines.length - 1, index + context);
    const last = ranges[ranges.length - 1];
    if (last && start <= last[1] + 1) last[1] = Math.max(last[1], end);
    else ranges.push([start, end]);
  }
  let text = '';
  for (const [start, end] of ranges) {
    const hunk = lines.slice(start, end + 1);
    const oldCount = hunk.filter((l) => l.kind !== '+').length;
    const newCount = hunk.filter((l) => l.kind !== '-').length;
    // git numbers from 1; an empty side names the line before the hunk.
    const before = lines.slice(0, start);
    const oldStart = before.filter((l) => l.kind !== '+').length + (oldCount > 0 ? 1 : 0);
    const newStart = before.filter((l) => l.kind !== '-').length + (newCount > 0 ? 1 : 0);
    text += `@@ -${oldStart},${oldCount} +${newStart},${newCount} @@\n`;
    for (const l of hunk) text += `${l.kind}${l.text}\n`;
  }
  return text;
}
