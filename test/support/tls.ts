import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A self-signed certificate for 127.0.0.1, made with openssl for the run (no key material lives in the repository).
 * It is its own CA, so a test can trust it by path as a custom CA.
 */
export function selfSignedCertificate(commonName = '127.0.0.1'): { key: Buffer; cert: Buffer; certPath: string } {
  const dir = mkdtempSync(join(tmpdir(), 'platform-tls-'));
  const [keyPath, certPath] = [join(dir, 'key.pem'), join(dir, 'cert.pem')];
  execFileSync(
    'openssl',
    [
      ...['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1'],
      ...['-subj', `/CN=${commonName}`, '-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', keyPath, '-out', certPath],
    ],
    { stdio: 'ignore' },
  );
  return { key: readFileSync(keyPath), cert: readFileSync(certPath), certPath };
}
