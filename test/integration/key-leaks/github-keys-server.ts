import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';

/** A P-256 key pair as GitHub signs reports with, named by its identifier. */
export interface SigningKey {
  identifier: string;
  privateKey: KeyObject;
  publicPem: string;
}

export function newSigningKey(identifier: string): SigningKey {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return { identifier, privateKey, publicPem: publicKey.export({ type: 'spki', format: 'pem' }).toString() };
}

/** Base64 of the DER ECDSA signature of `body`, as GitHub sends it in Github-Public-Key-Signature. */
export const signatureOf = (key: SigningKey, body: string) => sign('sha256', Buffer.from(body), { key: key.privateKey, dsaEncoding: 'der' }).toString('base64');

/** A local stand-in for https://api.github.com/meta/public_keys/secret_scanning, in GitHub's format; it counts its fetches and can be turned down. */
export class KeyListServer {
  keys: SigningKey[] = [];
  fetches = 0;
  down = false;
  private server: Server | undefined;

  async start(): Promise<string> {
    this.server = createServer((_req, res) => {
      this.fetches++;
      if (this.down) {
        res.writeHead(502).end();
        return;
      }
      const body = { public_keys: this.keys.map((k, i) => ({ key_identifier: k.identifier, key: k.publicPem, is_current: i === this.keys.length - 1 })) };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/meta/public_keys/secret_scanning`;
  }

  stop(): Promise<void> {
    return new Promise((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}
