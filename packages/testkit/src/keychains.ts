// PKCS#12 keychains for Secure PV Access tests and benchmarks, made with the JDK's keytool as
// core-pva's TLS.md shows: an authority, servers and a client signed by it, a server signed by
// another authority, an expired server certificate, and a client keychain holding only the
// authority. Test keys: nothing outside a test trusts them.
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';

export const KEYCHAIN_PASSWORD = 'changeit';

export interface Keychains {
  dir: string;
  /** Server keychains: signed by the authority, by another one, and signed but expired. */
  server: string;
  rogueServer: string;
  expiredServer: string;
  /** Client keychains: the authority only ("ca" identity), and a certificate of CN "Fred F." ("x509"). */
  trust: string;
  client: string;
  /** The authorities' certificates (PEM). */
  caCert: string;
  otherCaCert: string;
}

function keytool(dir: string, ...args: string[]): void {
  execFileSync('keytool', [...args, '-storepass', KEYCHAIN_PASSWORD, '-noprompt'], { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
}

/** An authority's keychain `name`.p12 and its certificate `name`.cer. */
function authority(dir: string, name: string, cn: string): string {
  keytool(
    dir,
    '-genkeypair',
    '-alias',
    name,
    '-keystore',
    `${name}.p12`,
    '-dname',
    `CN=${cn}`,
    '-keyalg',
    'EC',
    '-ext',
    'BasicConstraints=ca:true',
  );
  keytool(dir, '-exportcert', '-alias', name, '-keystore', `${name}.p12`, '-rfc', '-file', `${name}.cer`);
  return join(dir, `${name}.cer`);
}

/** A keychain `file` with a key of `cn` whose certificate authority `ca` signed (keytool -gencert `extra` options). */
function signed(dir: string, file: string, cn: string, ca: string, extra: string[] = []): string {
  const alias = 'me';
  keytool(dir, '-genkeypair', '-alias', alias, '-keystore', file, '-dname', `CN=${cn}`, '-keyalg', 'EC');
  keytool(dir, '-certreq', '-alias', alias, '-keystore', file, '-file', `${file}.csr`);
  keytool(
    dir,
    '-gencert',
    '-alias',
    ca,
    '-keystore',
    `${ca}.p12`,
    '-ext',
    'KeyUsage=digitalSignature,keyEncipherment',
    '-ext',
    'ExtendedKeyUsage=serverAuth,clientAuth',
    ...extra,
    '-infile',
    `${file}.csr`,
    '-outfile',
    `${file}.cer`,
  );
  keytool(dir, '-importcert', '-alias', ca, '-keystore', file, '-file', `${ca}.cer`);
  keytool(dir, '-importcert', '-alias', alias, '-keystore', file, '-file', `${file}.cer`);
  return join(dir, file);
}

/** Make every keychain of the tests in `dir` (about 20 keytool runs). */
export function makeKeychains(dir: string): Keychains {
  mkdirSync(dir, { recursive: true });
  const caCert = authority(dir, 'ca', 'epicsperf test authority');
  const otherCaCert = authority(dir, 'otherca', 'another authority');
  keytool(dir, '-importcert', '-alias', 'ca', '-keystore', 'trust.p12', '-file', 'ca.cer');
  return {
    dir,
    server: signed(dir, 'server.p12', 'tls-server', 'ca'),
    rogueServer: signed(dir, 'rogue.p12', 'tls-server', 'otherca'),
    expiredServer: signed(dir, 'expired.p12', 'tls-server', 'ca', ['-startdate', '-3d', '-validity', '1']),
    trust: join(dir, 'trust.p12'),
    client: signed(dir, 'client.p12', 'Fred F.', 'ca'),
    caCert,
    otherCaCert,
  };
}
