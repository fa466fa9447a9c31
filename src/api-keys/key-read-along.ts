import type { Request } from 'express';
import type { BearerAuthenticator } from '../bearer/bearer-authenticator';
import type { Authenticator } from '../http/authenticate';
import type { Database } from '../db/database';
import type { Principal } from '../shared/principals';
import { APPNAME_PATTERN } from '../shared/names';
import { findApiKeyByAppname, findApiKeyWithLivePrincipal, type ApiKeyRow } from './api-keys.repository';

/** Where ApiKeysService.get finds a key: the plain version is one SELECT by appname. */
export interface KeyFinder {
  find(principal: Principal, appname: string): Promise<ApiKeyRow | undefined>;
}

/**
 * GET /api/v1/api-keys/{appname}, the hottest route, in one database round trip: the bearer check's
 * liveness statement also reads the key (docs/performance.md, "read"). As the key routes'
 * Authenticator it answers exactly as the bearer check does; the key it read waits, tied to the
 * principal it returned, for ApiKeysService.get to find(). Every other request reads as usual.
 */
export class KeyReadAlong implements Authenticator, KeyFinder {
  private readonly readAlong = new WeakMap<Principal, { appname: string | null; key: ApiKeyRow | undefined }>();

  constructor(
    private readonly db: Database,
    private readonly bearer: BearerAuthenticator,
  ) {}

  async authenticate(accessToken: string, req: Request): Promise<Principal> {
    const appname = appnameToReadFor(req);
    if (appname === undefined) return this.bearer.authenticate(accessToken);
    const { principal, alongside } = await this.bearer.authenticateReading(accessToken, (q, sessionId) =>
      findApiKeyWithLivePrincipal(q, sessionId, appname),
    );
    this.readAlong.set(principal, { appname, key: alongside });
    return principal;
  }

  async find(principal: Principal, appname: string): Promise<ApiKeyRow | undefined> {
    const read = this.readAlong.get(principal);
    if (read && read.appname === appname) return read.key;
    return findApiKeyByAppname(this.db, appname);
  }
}

/**
 * The appname of a GET (or HEAD) /{appname}, from the raw path, as route params are not parsed before
 * authentication: null for a name no key can have (a 400 later), undefined for any other request.
 */
function appnameToReadFor(req: Request): string | null | undefined {
  if (req.method !== 'GET' && req.method !== 'HEAD') return undefined;
  const segment = /^\/([^/]+)\/?$/.exec(req.path)?.[1];
  if (segment === undefined) return undefined;
  try {
    const appname = decodeURIComponent(segment);
    return APPNAME_PATTERN.test(appname) ? appname : null;
  } catch {
    return null;
  }
}
