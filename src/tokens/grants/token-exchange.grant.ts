import { boundKeyOf } from '../../dpop/dpop';
import type { Exchanges } from '../../sessions/exchanges';
import { nowSeconds, type IssuedClaims, type TokenSigner } from '../../signing-keys/token-signer';
import { DpopProofError, OAuthError, UnauthorizedError } from '../../shared/errors';
import type { RequestOrigin } from '../../shared/audit-context';
import { heldScope, scopeWords } from '../../shared/principals';
import { clientAddressText } from '../../key-policies/addresses';
import { ACCESS_TOKEN_TYPE, type TokenIssuer } from '../token-issuer';
import type { OAuthTokenResponse } from '../tokens.responses';

export const TOKEN_EXCHANGE_GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange';

/** What a token exchange asks for (RFC 8693 §2.1), its parameters read and checked for form by the token endpoint. */
export interface TokenExchangeRequest {
  subjectToken: string;
  subjectTokenType: string;
  actorToken?: string;
  actorTokenType?: string;
  requestedTokenType?: string;
  /** Within the subject token's scope; undefined: all of it. */
  scope?: string;
  /** The one `audience` or `resource` named; undefined: AUDIENCE. */
  target?: string;
  /** The client that asked (an API key that authenticated, or a public client by name); undefined: the subject token's. */
  clientId?: string;
  /** The key of the request's DPoP proof, checked and spent: the new token is bound to it. */
  dpopJkt?: string;
}

/** Whom exchanged tokens may be for. */
export interface ExchangeAudiences {
  /** AUDIENCE: always allowed, and the `aud` when a request names none. */
  audience: string;
  /** EXCHANGE_AUDIENCES. */
  exchangeAudiences: readonly string[];
}

const invalidRequest = (message: string) => new OAuthError('invalid_request', message);

/**
 * Token exchange (RFC 8693) on the token endpoint: a live access token of this service (the subject)
 * becomes an access token for the same principal that can only be narrower: its scope within the
 * subject token's, its life within the subject token's, in the subject's session (so it ends with
 * it), for AUDIENCE or one of EXCHANGE_AUDIENCES, with no refresh token. An actor token names who
 * acts for the subject (`act`, §4.1). One read of the sessions and the audit event, in one statement
 * shared by concurrent exchanges: no other write (docs/token-exchange-and-dpop.md).
 */
export class TokenExchangeGrant {
  constructor(
    private readonly exchanges: Exchanges,
    private readonly signer: TokenSigner,
    private readonly issuer: TokenIssuer,
    private readonly audiences: ExchangeAudiences,
  ) {}

  async exchange(request: TokenExchangeRequest, origin: RequestOrigin): Promise<OAuthTokenResponse> {
    if (request.requestedTokenType !== undefined && request.requestedTokenType !== ACCESS_TOKEN_TYPE) {
      throw invalidRequest(`requested_token_type must be ${ACCESS_TOKEN_TYPE}`);
    }
    if (request.actorToken === undefined && request.actorTokenType !== undefined) throw invalidRequest('actor_token_type is sent only with actor_token');
    const audience = this.audienceOf(request.target);
    const subject = await this.verified('subject_token', request.subjectToken, request.subjectTokenType, request.dpopJkt);
    const actor = request.actorToken === undefined ? undefined : await this.verified('actor_token', request.actorToken, request.actorTokenType, request.dpopJkt);
    // A token for another audience is that audience's: exchanged again, it may only narrow for the
    // same audience, never come back as a token for this service or go on to a third.
    if (subject.aud !== this.audiences.audience && subject.aud !== audience) {
      throw new OAuthError('invalid_target', 'A token for another audience may only be exchanged for that same audience');
    }
    // An actor proves who acts with a token of its own for this service, not one handed to another.
    if (actor && actor.aud !== this.audiences.audience) throw invalidRequest('The actor_token must be an access token for this service');

    const now = nowSeconds();
    // Refused before anything is written, so the new token has at least a second of life.
    if (subject.exp - now < 1) throw invalidRequest('The subject_token has expired');
    const scope = scopeOf(request.scope, subject);
    const clientId = request.clientId ?? (typeof subject.client_id === 'string' ? subject.client_id : undefined);
    if (clientId === undefined) throw invalidRequest('The subject_token names no client');

    const live = await this.exchanges.record({
      sessionId: subject.sid,
      principalId: subject.sub,
      ...(actor && { actor: { sessionId: actor.sid, principalId: actor.sub } }),
      audience,
      scope,
      clientId,
      // A key's token is exchanged only from an address its policy allows, as on every route of this service.
      address: clientAddressText(origin.clientAddress),
      origin,
    });
    if (!live) throw invalidRequest(`The ${actor ? 'subject_token or actor_token' : 'subject_token'} is no longer valid`);
    // What the role and the session still hold now, as on every call with the subject token.
    const held = heldScope(live.role, live.scope, scope, live.permissions);
    if (held === '') throw new OAuthError('invalid_scope', 'The subject no longer holds any of the requested scope');
    return this.issuer.issueExchanged(
      { type: live.type, id: live.principal_id, name: live.name, role: live.role, permissions: live.permissions },
      // Never past the subject token, nor past its key's expiry as the database holds it now.
      { sessionId: subject.sid, now, notAfter: Math.min(subject.exp, live.not_after ?? Infinity), scope: held, clientId, audience, act: actOf(subject, actor), dpopJkt: request.dpopJkt },
    );
  }

  /** RFC 8693 §2.2.2: one audience this service issues tokens for, else invalid_target. */
  private audienceOf(target: string | undefined): string {
    const { audience, exchangeAudiences } = this.audiences;
    if (target === undefined || target === audience) return audience;
    if (exchangeAudiences.includes(target)) return target;
    throw new OAuthError('invalid_target', 'The audience or resource is not one this service issues tokens for');
  }

  /**
   * A live access token of this service, of any audience it issues tokens for, or invalid_request
   * (RFC 8693 §2.2.2). A DPoP-bound one is exchanged only by a proof of its key, so an exchange cannot
   * unbind a stolen token.
   */
  private async verified(name: string, token: string, type: string | undefined, dpopJkt: string | undefined): Promise<IssuedClaims> {
    if (type === undefined) throw invalidRequest(`Parameter ${name}_type is required`);
    if (type !== ACCESS_TOKEN_TYPE) throw invalidRequest(`${name}_type must be ${ACCESS_TOKEN_TYPE}: only access tokens of this service are exchanged`);
    let claims: IssuedClaims;
    try {
      claims = await this.signer.verify(token, 'Bearer', 'any-issued');
    } catch (err) {
      if (err instanceof UnauthorizedError) throw invalidRequest(`The ${name} is not a live access token of this service`);
      throw err;
    }
    const bound = boundKeyOf(claims);
    if (bound !== undefined && bound !== dpopJkt) throw new DpopProofError(`The ${name} is DPoP-bound: the request needs a DPoP proof by its key`);
    return claims;
  }
}

/** The scope asked for, each word once, if the subject token holds every word of it (`openid` too); else all of the subject token's. */
function scopeOf(requested: string | undefined, subject: IssuedClaims): string {
  const held = scopeWords(typeof subject.scope === 'string' ? subject.scope : '');
  if (requested === undefined) return held.join(' ');
  const words = scopeWords(requested);
  if (!words.every((word) => held.includes(word))) throw new OAuthError('invalid_scope', 'A token exchange may only narrow the subject token\'s scope');
  return words.join(' ');
}

/**
 * RFC 8693 §4.1: the actor, and before it whoever acted for the actor (its own `act`, nested). With
 * no actor token, the subject token's own `act` stays: a narrower token does not forget who acts.
 */
function actOf(subject: IssuedClaims, actor: IssuedClaims | undefined): Record<string, unknown> | undefined {
  if (!actor) return isObject(subject.act) ? subject.act : undefined;
  return { sub: actor.sub, ...(isObject(actor.act) && { act: actor.act }) };
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
