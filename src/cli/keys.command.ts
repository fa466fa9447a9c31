import type { SigningKeysService } from '../signing-keys/signing-keys.service';

export const KEYS_USAGE = `keys rotate   make a new signing key active; the old public key stays in the JWK Set until its tokens expire`;

export async function runKeysCommand(signingKeys: SigningKeysService, [action]: string[]): Promise<string> {
  if (action !== 'rotate') throw new Error(`unknown keys command "${action ?? ''}"\n\n${KEYS_USAGE}`);
  const kid = await signingKeys.rotate();
  return `New signing key ${kid} is active; running instances pick it up within 30 seconds`;
}
