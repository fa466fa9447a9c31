import { z } from 'zod';

const seconds = z.int().min(0);
const uuid = z.string().regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i);

const activeToken = {
  active: z.literal(true),
  scope: z
    .string()
    .regex(/^(?:[a-z0-9][a-z0-9:._-]*(?: [a-z0-9][a-z0-9:._-]*)*)?$/)
    .meta({ description: "The scopes the token grants now: those it was issued with, within what the role and an API key's permissions grant now." }),
  token_type: z.enum(['access_token', 'refresh_token']),
  exp: seconds.meta({ description: 'Expiry, Unix seconds.' }),
  iat: seconds.meta({ description: 'Issued at, Unix seconds.' }),
  sub: uuid.meta({ description: 'The principal\'s id.' }),
  aud: z.string().min(1),
  iss: z.string().min(1),
  jti: uuid,
  sid: uuid.meta({ description: 'The session.' }),
  cnf: z
    .strictObject({ jkt: z.string().min(1).meta({ description: 'RFC 7638 thumbprint (SHA-256, base64url) of the DPoP key.' }) })
    .optional()
    .meta({ description: 'RFC 9449 §6.2: present when the token is DPoP-bound; it is accepted only with a proof by that key.' }),
  act: z
    .record(z.string(), z.unknown())
    .optional()
    .meta({ description: 'RFC 8693 §4.1: who acts on the subject\'s behalf (`sub`), and before it, nested, who acted for the actor.' }),
};

const clientId = z.string().min(1);

/** RFC 7662 §2.2: a live token of an API key or of a user (`username`), each naming its client, or exactly `{active: false}`. */
export const introspectionResponse = z.union([
  z.strictObject({ ...activeToken, client_id: clientId.meta({ description: 'The API key\'s appname: an API key is its own client.' }) }),
  z.strictObject({
    ...activeToken,
    client_id: clientId.meta({ description: 'The client the user\'s tokens were issued to (DEFAULT_CLIENT_ID when none was named).' }),
    username: z.string().min(1).meta({ description: 'The user\'s username.' }),
  }),
  z.strictObject({ active: z.literal(false) }).meta({ description: 'Expired, revoked, malformed, foreign, or its principal is gone or disabled.' }),
]);

const url = z.string().min(1);
const names = z.array(z.string().min(1));

/** RFC 8414 authorization server metadata (the same document as OpenID Connect Discovery 1.0). */
export const discoveryResponse = z.strictObject({
  issuer: url,
  jwks_uri: url,
  token_endpoint: url.meta({ description: 'POST /oauth2/token: every grant.' }),
  revocation_endpoint: url,
  introspection_endpoint: url,
  grant_types_supported: names,
  response_types_supported: z.array(z.string()).meta({ description: 'Empty: there is no authorization endpoint.' }),
  subject_types_supported: names,
  scopes_supported: names,
  token_endpoint_auth_methods_supported: names,
  token_endpoint_auth_signing_alg_values_supported: names,
  revocation_endpoint_auth_methods_supported: names,
  introspection_endpoint_auth_methods_supported: names,
  id_token_signing_alg_values_supported: names,
  dpop_signing_alg_values_supported: names.meta({ description: 'RFC 9449 §5.1: the algorithms a DPoP proof may be signed with.' }),
  claims_supported: names,
});

export type IntrospectionResult = z.output<typeof introspectionResponse>;
export type DiscoveryDocument = z.output<typeof discoveryResponse>;
