// Arbitrary-size non-negative integers kept as digit strings. Versions carry numbers far beyond 2^53
// (the fixtures compare 30-digit components), so every comparator compares "normalised digit strings":
// no leading zeros, "0" for zero. Comparing by length first and then by code unit is numeric order.

/** True for the char codes of the ASCII digits 0-9 (Unicode digits are not version digits anywhere). */
export function isDigitCode(c: number): boolean {
  return c >= 48 && c <= 57;
}

/** True for the char codes of ASCII letters A-Z and a-z. */
export function isLetterCode(c: number): boolean {
  return (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
}

/** True when `s` is a non-empty run of ASCII digits. */
export function isAllDigits(s: string): boolean {
  if (s.length === 0) return false;
  for (let i = 0; i < s.length; i++) if (!isDigitCode(s.charCodeAt(i))) return false;
  return true;
}

/** Removes leading zeros from a digit run ("007" → "7", "000" → "0", "" → "0"). */
export function normDigits(d: string): string {
  const n = d.length;
  if (n === 0) return '0';
  let i = 0;
  while (i < n - 1 && d.charCodeAt(i) === 48) i++;
  return i === 0 ? d : d.slice(i);
}

/** Numeric comparison of two normalised digit strings (see {@link normDigits}). */
export function cmpDigits(a: string, b: string): number {
  if (a.length !== b.length) return a.length < b.length ? -1 : 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Code-unit string comparison (Go's strings.Compare for ASCII input). */
export function cmpStr(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Compares two lists of normalised numbers, padding the shorter one with zeros ("1.0" == "1.0.0"). */
export function cmpPadded(a: readonly string[], b: readonly string[]): number {
  const n = a.length > b.length ? a.length : b.length;
  for (let i = 0; i < n; i++) {
    const d = cmpDigits(a[i] ?? '0', b[i] ?? '0');
    if (d !== 0) return d;
  }
  return 0;
}
