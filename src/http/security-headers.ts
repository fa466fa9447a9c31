import helmet from 'helmet';

/**
 * Helmet set for a JSON API (the OWASP REST Security Cheat Sheet's headers) rather than for HTML pages.
 * Nothing here is ever rendered as a document: the CSP allows nothing and no framing, and framing is
 * refused outright. Helmet's page-only headers (COOP, Origin-Agent-Cluster, X-DNS-Prefetch-Control,
 * X-Download-Options, X-Permitted-Cross-Domain-Policies, X-XSS-Protection) are left out: they protect
 * nothing on a JSON response, and each is a header every response writes (docs/performance.md,
 * "request overhead").
 * X-Powered-By is removed by the app itself (app.disable), so helmet need not remove it again.
 */
export const securityHeaders = () =>
  helmet({
    contentSecurityPolicy: { useDefaults: false, directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] } },
    xFrameOptions: { action: 'deny' },
    crossOriginOpenerPolicy: false,
    originAgentCluster: false,
    xDnsPrefetchControl: false,
    xDownloadOptions: false,
    xPermittedCrossDomainPolicies: false,
    xXssProtection: false,
    xPoweredBy: false,
  });

/**
 * The policy of the pages the service serves (the admin console, the API reference), word for word
 * the contract's: scripts, styles and data only from this origin, nothing inline, no framing. It
 * replaces the API's `default-src 'none'` above, which would stop a page from loading at all.
 */
export const PAGE_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "frame-ancestors 'none'; base-uri 'none'; form-action 'self'";
