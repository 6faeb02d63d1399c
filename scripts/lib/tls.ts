// Certificates for the tests and the bench, generated per run (nothing checked in). All RSA
// 2048 / SHA-256. Here rather than in test/support, so that the bench need not import a test
// helper, nor the product carry what only its tests and its bench use.
import net from 'node:net';
import { generate } from 'selfsigned';

export interface Pem {
  cert: string;
  key: string;
}

export interface Validity {
  notBeforeDate?: Date;
  notAfterDate?: Date;
}

/** A certificate authority that the service under test trusts explicitly (HttpSenderOptions.ca, NODE_EXTRA_CA_CERTS). */
export async function createTestCa(): Promise<Pem> {
  const pems = await generate([{ name: 'commonName', value: 'svc-webhooks test CA' }], {
    algorithm: 'sha256',
    keySize: 2048,
    extensions: [
      { name: 'basicConstraints', cA: true, critical: true },
      { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    ],
  });
  return { cert: pems.cert, key: pems.private };
}

/** A leaf certificate for `names`, signed by `ca`. */
export async function issueServerCert(ca: Pem, names: string[] = ['localhost', '127.0.0.1', '::1'], validity: Validity = {}): Promise<Pem> {
  const pems = await generate([{ name: 'commonName', value: names[0] ?? 'localhost' }], {
    ...leafOptions(names, validity),
    ca: { cert: ca.cert, key: ca.key },
  });
  return { cert: pems.cert, key: pems.private };
}

/** A client certificate (mutual TLS) for `commonName`, signed by `ca`. */
export async function issueClientCert(ca: Pem, commonName: string): Promise<Pem> {
  const pems = await generate([{ name: 'commonName', value: commonName }], {
    algorithm: 'sha256',
    keySize: 2048,
    extensions: [
      { name: 'basicConstraints', cA: false, critical: true },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
      { name: 'extKeyUsage', clientAuth: true },
    ],
    ca: { cert: ca.cert, key: ca.key },
  });
  return { cert: pems.cert, key: pems.private };
}

/** A self-signed leaf for `names`: valid names, but no CA anyone trusts vouches for it. */
export async function createSelfSignedCert(names: string[] = ['localhost', '127.0.0.1', '::1']): Promise<Pem> {
  const pems = await generate([{ name: 'commonName', value: names[0] ?? 'localhost' }], leafOptions(names, {}));
  return { cert: pems.cert, key: pems.private };
}

function leafOptions(names: string[], validity: Validity) {
  return {
    algorithm: 'sha256',
    keySize: 2048,
    ...validity,
    extensions: [
      { name: 'basicConstraints' as const, cA: false, critical: true },
      { name: 'keyUsage' as const, digitalSignature: true, keyEncipherment: true, critical: true },
      { name: 'extKeyUsage' as const, serverAuth: true },
      {
        name: 'subjectAltName' as const,
        altNames: names.map((name) => (net.isIP(name) !== 0 ? { type: 7 as const, ip: name } : { type: 2 as const, value: name })),
      },
    ],
  };
}
