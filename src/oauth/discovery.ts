import { PATHS } from '../shared/paths';
import { scopeFor } from '../shared/principals';
import type { DiscoveryDocument } from './oauth.responses';
import { GRANT_TYPES } from './token-endpoint';
import { DPOP_SIGNING_ALGORITHMS } from '../shared/dpop';

/** The highest role holds every scope there is. */
const SCOPES = scopeFor('admin').split(' ');

/** Claims of our access and ID tokens (see TokenIssuer.issue). */
const CLAIMS = [
  'iss', 'sub', 'aud', 'azp', 'iat', 'exp', 'jti', 'sid', 'typ', 'auth_time', 'scope', 'roles', 'client_id', 'preferred_username', 'principal_type',
  // RFC 9449 §6.1 (DPoP-bound tokens) and RFC 8693 §4.1 (exchanged tokens with an actor).
  'cnf', 'act',
];

const SECRET_METHODS = ['client_secret_basic', 'client_secret_post'];

/**
 * RFC 8414 authorization server metadata, served also as OpenID Connect Discovery 1.0: registered
 * names only. Every URL is built from the configured issuer, as clients must reach the service under
 * the name its tokens carry.
 */
export function discoveryDocument(issuer: string): DiscoveryDocument {
  const at = (path: string) => `${issuer}${path}`;
  return {
    issuer,
    jwks_uri: at(PATHS.jwks),
    token_endpoint: at(PATHS.oauthToken),
    revocation_endpoint: at(PATHS.oauthRevocation),
    introspection_endpoint: at(PATHS.oauthIntrospection),
    grant_types_supported: [...GRANT_TYPES],
    // There is no authorization endpoint.
    response_types_supported: [],
    subject_types_supported: ['public'],
    scopes_supported: SCOPES,
    token_endpoint_auth_methods_supported: [...SECRET_METHODS, 'client_secret_jwt', 'none'],
    token_endpoint_auth_signing_alg_values_supported: ['HS256', 'HS384', 'HS512'],
    revocation_endpoint_auth_methods_supported: [...SECRET_METHODS, 'none'],
    introspection_endpoint_auth_methods_supported: SECRET_METHODS,
    id_token_signing_alg_values_supported: ['ES256'],
    dpop_signing_alg_values_supported: [...DPOP_SIGNING_ALGORITHMS],
    claims_supported: CLAIMS,
  };
}
