import { timingSafeEqual } from 'node:crypto';
import { sha256 } from '../crypto/digest';
import { generateAppkey } from '../api-keys/appkey';
import type { KeyAppkeys, ValidAppkey } from '../api-keys/valid-appkeys';
import { LoginRefusedError } from '../shared/errors';
import { OPEN_POLICY } from '../key-policies/policy';
import { verifyRequestToken, type RequestTokenRules } from './request-token';

/** How an API key proves itself: a request token signed with an appkey, or the appkey itself as a client secret. */
export type KeyCredential = { requestToken: string; rules: RequestTokenRules } | { secret: string };

/** Where the appkey proved itself: which appkey generation, and the request token's jti to record against replay. */
export interface KeyProof {
  generation: number;
  jti: string | null;
  jtiExpiresAt: number | null;
}

/** Which of the key's valid appkeys proves the credential, or undefined when none does. */
export function provedBy(key: KeyAppkeys, credential: KeyCredential): KeyProof | undefined {
  if ('requestToken' in credential) {
    const signing = key.appkeys.filter((k): k is ValidAppkey & { appkey: string } => k.appkey !== null);
    // Only an imported key (its first generation, so no previous appkey) has none: the refusal says
    // what to do, once a fresh read confirms that the key has not been regenerated meanwhile.
    if (signing.length === 0) {
      if (key.fresh) throw new LoginRefusedError(IMPORTED_KEY_CANNOT_SIGN, 'imported_key_cannot_sign');
      return undefined;
    }
    const verified = verifyRequestToken(credential.requestToken, signing.map((k) => k.appkey), credential.rules);
    // The token must name the key it is signed for: a client_id given beside it names the same key.
    if (!verified || verified.claims.appname !== key.appname) return undefined;
    // Replays are refused for as long as the token could still be accepted.
    const { jti, exp } = verified.claims;
    return { generation: signing[verified.signedWith]!.generation, jti, jtiExpiresAt: exp + credential.rules.clockTolerance };
  }
  // Digests of equal length, compared in constant time: neither the appkey nor its length shows in the
  // timing. A digest is all there is of an imported key.
  const presented = sha256(credential.secret);
  const match = key.appkeys.find((k) => timingSafeEqual(k.digest, presented));
  return match && { generation: match.generation, jti: null, jtiExpiresAt: null };
}

/** The refusal of a signature by an imported key. */
export const IMPORTED_KEY_CANNOT_SIGN =
  'This API key was imported from another system and cannot sign request tokens or client assertions: regenerate the key to get one of this service, or present the key itself as a client secret';

/** An appkey of the usual shape that no one holds: made at start, never stored, never shown. */
const NOBODYS_APPKEY = generateAppkey();
const NOBODYS_DIGEST = sha256(NOBODYS_APPKEY);

/**
 * The work of `provedBy` against a key no credential can prove, for a credential naming an unknown
 * appname: the same HMAC (request token) or the same digests and comparison (client secret) as for a
 * known key, so the time of a refusal does not tell whether the appname exists. The outcome is moot:
 * the caller refuses either way.
 */
export function spendProofWork(appname: string, credential: KeyCredential): void {
  try {
    provedBy({ id: '', appname, appkeys: [{ appkey: NOBODYS_APPKEY, digest: NOBODYS_DIGEST, generation: 0 }], policy: OPEN_POLICY, fresh: true }, credential);
  } catch {
    // A refusal of the token's claims (only reached past a signature no one can make): refused as unknown below anyway.
  }
}
