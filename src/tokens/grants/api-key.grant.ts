import type { Database } from '../../db/database';
import type { ApiKeyLogins } from '../../sessions/api-key-logins';
import type { KeyAppkeys, ValidAppkeys } from '../../api-keys/valid-appkeys';
import { LoginRefusedError } from '../../shared/errors';
import type { RequestOrigin } from '../../shared/audit-context';
import { recordingRefusals } from '../failed-logins';
import { claimedAppname, verifyRequestToken, type RequestTokenRules } from '../request-token';
import type { TokenIssuer } from '../token-issuer';
import type { TokenResponse } from '../tokens.responses';

/** POST /api/v1/auth/token: a request token signed with an appkey opens a session of its API key. */
export class ApiKeyGrant {
  constructor(
    private readonly db: Database,
    private readonly issuer: TokenIssuer,
    private readonly appkeys: ValidAppkeys,
    private readonly logins: ApiKeyLogins,
    private readonly rules: RequestTokenRules,
  ) {}

  exchange(requestToken: string, origin: RequestOrigin): Promise<TokenResponse> {
    let appname: string | null = null;
    return recordingRefusals(this.db, origin, () => ({ appname }), async () => {
      appname = claimedAppname(requestToken);
      const attempt = await this.appkeys.withValidAppkeys(appname, (key) => this.open(key, requestToken, origin));
      // A bad signature and an unknown appname read the same, so appnames cannot be probed.
      if (!attempt.found) throw new LoginRefusedError('Invalid request token', 'unknown_api_key');
      // Signed by none of the key's valid appkeys, or the key changed (deleted, regenerated) meanwhile.
      if (attempt.result === undefined) throw new LoginRefusedError('Invalid request token', 'invalid_request_token');
      return attempt.result;
    });
  }

  /** Undefined when none of these appkeys signed the token, or the key changed since they were read: nothing was written. */
  private async open(key: KeyAppkeys, requestToken: string, origin: RequestOrigin): Promise<TokenResponse | undefined> {
    const verified = verifyRequestToken(requestToken, key.appkeys.map((k) => k.appkey), this.rules);
    if (!verified) return undefined;
    const session = this.issuer.newSession(origin);
    const outcome = await this.logins.open({
      ...session,
      apiKeyId: key.id,
      keyGeneration: key.appkeys[verified.signedWith]!.generation,
      jti: verified.claims.jti,
      // Replays are refused for as long as the token could still be accepted.
      jtiExpiresAt: verified.claims.exp + this.rules.clockTolerance,
    });
    if (!outcome.opened) {
      if (outcome.refused === 'stale') return undefined;
      throw new LoginRefusedError('Request token has already been used', 'replayed_request_token');
    }
    const subject = { type: 'api_key', id: key.id, name: key.appname, role: outcome.role } as const;
    return this.issuer.issue(subject, { id: session.id, refreshJti: session.refreshJti, times: outcome.times, now: session.now });
  }
}
