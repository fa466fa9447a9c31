import { PATHS } from '../shared/paths';
import { scopeFor } from '../shared/principals';
import type { DiscoveryDocument } from './oauth.responses';


/** The highest role holds every scope there is. */
const SCOPES = scopeFor('admin').split(' ');

/** Claims of our access and ID tokens (see TokenService.issue). */
const CLAIMS = ['iss', 'sub', 'aud', 'iat', 'exp', 'jti', 'sid', 'typ', 'auth_time', 'scope', 'roles', 'preferred_username', 'principal_type'];

/**
 * OpenID Connect Discovery 1.0 / RFC 8414 metadata. Every URL is built from the configured issuer,
 * as clients must reach the service under the name its tokens carry.
 */
export function discoveryDocument(issuer: string): DiscoveryDocument {
  const at = (path: string) => `${issuer}${path}`;
  return {
    issuer,
    jwks_uri: at(PATHS.jwks),
    token_endpoint: at(PATHS.token),
    refresh_endpoint: at(PATHS.refresh),
    revocation_endpoint: at(PATHS.revocation),
    introspection_endpoint: at(PATHS.introspection),
    grant_types_supported: ['password', 'refresh_token'],
    subject_types_supported: ['public'],
    id_token_signing_alg_values_supported: ['ES256'],
    // Public clients: the token, refresh and revocation routes take no client authentication.
    token_endpoint_auth_methods_supported: ['none'],
    revocation_endpoint_auth_methods_supported: ['none'],
    scopes_supported: SCOPES,
    claims_supported: CLAIMS,
  };
}
