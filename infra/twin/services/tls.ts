import { execFile } from 'node:child_process';
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

export interface TwinCertificates {
  caFile: string;
  certFile: string;
  keyFile: string;
  /** The CA certificate as PEM text, for clients that take it inline (mysql2 `ssl.ca`, ioredis `tls.ca`). */
  ca: string;
}

const DAY_MS = 86_400_000;
/** The longest validity clients accept for a server certificate (Apple's limit; Node has none). */
const VALIDITY_DAYS = 825;

/**
 * What Node's TLS checks when a client verifies a store: a CA that may only sign, and a server
 * certificate for TLS servers naming the address the twin's stores listen on. localhost too,
 * since mysql2 checks that name (not the IP) when it verifies identity on a connection to an IP.
 */
const OPENSSL_CONFIG = `
[req]
distinguished_name = subject
prompt = no
[subject]
[twin_ca]
basicConstraints = critical, CA:TRUE, pathlen:0
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
[twin_server]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = serverAuth
subjectAltName = IP:127.0.0.1, DNS:localhost
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
`;

const openssl = promisify(execFile);

/**
 * A private CA and a server certificate it signed, for the twin's Redis and MariaDB. Generated
 * once per dir and reused while both stay valid for another day. The CA's key is deleted once it
 * has signed: the CA vouches for this one server certificate and nothing else, whoever trusts it.
 */
export async function ensureTwinCertificates(dir: string): Promise<TwinCertificates> {
  const certificates = {
    caFile: resolve(dir, 'ca.pem'),
    certFile: resolve(dir, 'server.pem'),
    keyFile: resolve(dir, 'server-key.pem'),
  };
  const current = readValid(certificates);
  if (current) return current;

  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const work = mkdtempSync(join(dir, 'generating-'));
  try {
    const config = join(work, 'openssl.cnf');
    writeFileSync(config, OPENSSL_CONFIG);
    const newKey = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-noenc', '-days', String(VALIDITY_DAYS), '-config', config];
    const [caKey, ca, key, cert] = [join(work, 'ca-key.pem'), join(work, 'ca.pem'), join(work, 'server-key.pem'), join(work, 'server.pem')];
    await run(['req', '-x509', ...newKey, '-extensions', 'twin_ca', '-subj', '/CN=Surge twin CA', '-keyout', caKey, '-out', ca]);
    await run(['req', '-x509', ...newKey, '-extensions', 'twin_server', '-subj', '/CN=127.0.0.1', '-CA', ca, '-CAkey', caKey, '-keyout', key, '-out', cert]);
    // OpenSSL 3 writes keys so already; the servers run as this user and need nobody else to read it.
    chmodSync(key, 0o600);
    renameSync(ca, certificates.caFile);
    renameSync(key, certificates.keyFile);
    renameSync(cert, certificates.certFile);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  const generated = readValid(certificates);
  if (!generated) throw new Error(`openssl generated certificates in ${dir} that do not verify`);
  return generated;
}

async function run(args: string[]): Promise<void> {
  await openssl('openssl', args).catch((error: Error & { stderr?: string }) => {
    throw new Error(`openssl ${args[0]} failed: ${error.stderr?.trim() || error.message}`);
  });
}

/** The certificates in place if they chain, match their key and stay valid for another day; otherwise undefined. */
function readValid(files: Omit<TwinCertificates, 'ca'>): TwinCertificates | undefined {
  try {
    const ca = readFileSync(files.caFile, 'utf8');
    const caCert = new X509Certificate(ca);
    const cert = new X509Certificate(readFileSync(files.certFile));
    const key = createPrivateKey(readFileSync(files.keyFile));
    const validFor = (c: X509Certificate) => Date.parse(c.validTo) - Date.now();
    const valid =
      validFor(caCert) > DAY_MS && validFor(cert) > DAY_MS && cert.checkIssued(caCert) && cert.verify(caCert.publicKey) && cert.checkPrivateKey(key);
    return valid ? { ...files, ca } : undefined;
  } catch {
    return undefined;
  }
}
