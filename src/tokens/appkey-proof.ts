import { timingSafeEqual } from 'node:crypto';
import { sha256 } from '../crypto/digest';
import { generateAppkey } from '../api-keys/appkey';
import type { KeyAppkeys } from '../api-keys/valid-appkeys';
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
    const verified = verifyRequestToken(credential.requestToken, key.appkeys.map((k) => k.appkey), credential.rules);
    // The token must name the key it is signed for: a client_id given beside it names the same key.
    if (!verified || verified.claims.appname !== key.appname) return undefined;
    // Replays are refused for as long as the token could still be accepted.
    const { jti, exp } = verified.claims;
    return { generation: key.appkeys[verified.signedWith]!.generation, jti, jtiExpiresAt: exp + credential.rules.clockTolerance };
  }
  // Digests of equal length, compared in constant time: neither the appkey nor its length shows in the timing.
  const presented = sha256(credential.secret);
  const match = key.appkeys.find((k) => timingSafeEqual(sha256(k.appkey), presented));
  return match && { generation: match.generation, jti: null, jtiExpiresAt: null };
}

/** An appkey of the usual shape that no one holds: made at start, never stored, never shown. */
const NOBODYS_APPKEY = generateAppkey();

/**
 * The work of `provedBy` against a key no credential can prove, for a credential naming an unknown
 * appname: the same HMAC (request token) or the same digests and comparison (client secret) as for a
 * known key, so the time of a refusal does not tell whether the appname exists. The outcome is moot:
 * the caller refuses either way.
 */
export function spendProofWork(appname: string, credential: KeyCredential): void {
  try {
    provedBy({ id: '', appname, appkeys: [{ appkey: NOBODYS_APPKEY, generation: 0 }], policy: OPEN_POLICY, fresh: true }, credential);
  } catch {
    // A refusal of the token's claims (only reached past a signature no one can make): refused as unknown below anyway.
  }
}
