/**
 * The words of DPoP (RFC 9449) every floor shares: which proof algorithms the service takes, and
 * what a request presents for a proof check.
 */

/**
 * The `alg` values a DPoP proof may be signed with, as discovery lists them and the challenge's
 * `algs` names them: ES256 (P-256), EdDSA and its fully specified name Ed25519 (RFC 9864; Ed25519
 * keys only), and RS256 (at least 2048 bits).
 */
export const DPOP_SIGNING_ALGORITHMS = ['ES256', 'EdDSA', 'Ed25519', 'RS256'] as const;
export type DpopSigningAlgorithm = (typeof DPOP_SIGNING_ALGORITHMS)[number];

/** What a request shows a DPoP check: its DPoP header fields (more than one is refused), its method, and its path without the query. */
export interface DpopPresentation {
  proofs: readonly string[];
  method: string;
  path: string;
}
