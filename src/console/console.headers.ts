/**
 * The console's Content-Security-Policy (issue 19 item 1): scripts, styles and connections only from this origin,
 * no inline script or style, no framing, no plugins, no `<base>` rewriting and no form posts anywhere (the sign-in
 * form is sent by script through `fetch`). `img-src data:` is for nothing but the SVG chart's downloads.
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
  "object-src 'none'",
].join('; ');

/** Headers on every console response, the 304s and 404s included. */
export const CONSOLE_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': CONSOLE_CSP,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
  'permissions-policy': 'camera=(), microphone=(), geolocation=(), payment=(), usb=()',
  // Revalidate every time (the ETag makes that a 304), so a restart with a new console is picked up at once.
  'cache-control': 'no-cache',
};
