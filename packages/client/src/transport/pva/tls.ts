// Secure PV Access: the TLS settings of a client from its keychain, as core-pva and pvxs use one:
// the keychain's certificates other than its own are the authorities a server's certificate must
// chain to (no system roots, no host name check: servers are found by address), and its key and
// certificate, when it has them, identify the client ("x509", by the certificate's common name).
import { readFileSync } from 'node:fs';
import type { ConnectionOptions } from 'node:tls';
import { KeychainError, readKeychain } from '../keychain.js';
import type { PvaTlsConfig } from './config.js';

export interface PvaTls {
  /** What tls.connect takes (host, port and reading aside). */
  options: ConnectionOptions;
  /** The common name of the client's certificate: it connects as "x509" with it, else as "ca". */
  identity: string | undefined;
}

/** The common name of a distinguished name in Node's "CN=x\nO=y" form. */
export function commonName(dn: string | undefined): string | undefined {
  return dn
    ?.split('\n')
    .find((l) => l.startsWith('CN='))
    ?.slice(3);
}

/** Read the keychain of `cfg`: throws KeychainError naming the file when it cannot be used. */
export function loadPvaTls(cfg: PvaTlsConfig): PvaTls {
  const where = `keychain ${cfg.keychain}`;
  let password: string;
  let file: Buffer;
  try {
    password = typeof cfg.password === 'string' ? cfg.password : readFileSync(cfg.password.file, 'utf8').replace(/\r?\n$/, '');
  } catch (err) {
    throw new KeychainError(`${where}: cannot read the password file: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  try {
    file = readFileSync(cfg.keychain);
  } catch (err) {
    throw new KeychainError(`${where}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  let k: ReturnType<typeof readKeychain>;
  try {
    k = readKeychain(file, password);
  } catch (err) {
    throw new KeychainError(`${where}: ${(err as Error).message}`);
  }
  const seen = new Set<string>();
  const ca = k.trusted.filter((c) => !seen.has(c.fingerprint256) && seen.add(c.fingerprint256)).map((c) => c.toString());
  if (ca.length === 0) throw new KeychainError(`${where}: holds no certificate to check servers against`);
  const options: ConnectionOptions = {
    ca,
    // A server is reached by the address its search reply gave, not by a name its certificate holds.
    checkServerIdentity: () => undefined,
    minVersion: 'TLSv1.2',
  };
  if (k.key && k.cert) {
    options.key = k.key.export({ format: 'pem', type: 'pkcs8' });
    options.cert = k.cert.toString();
  }
  return { options, identity: commonName(k.cert?.subject) };
}
