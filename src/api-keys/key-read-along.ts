import type { Request } from 'express';
import type { BearerAuthenticator } from '../bearer/bearer-authenticator';
import type { Authenticator, PresentedAccessToken } from '../http/authenticate';
import { preparedStatement, type Database, type Queryable } from '../db/database';
import type { Prefixed } from '../db/prefixed-columns';
import { livePrincipalsWhere, type LivePrincipalRow } from '../sessions/liveness';
import type { Principal } from '../shared/principals';
import { APPNAME_PATTERN } from '../shared/names';
import { findApiKeyByAppname, type ApiKeyRow } from './api-keys.repository';

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

  async authenticate(presented: PresentedAccessToken, req: Request): Promise<Principal> {
    const appname = appnameToReadFor(req);
    if (appname === undefined) return this.bearer.authenticate(presented, req);
    const { principal, alongside } = await this.bearer.authenticateReading(
      presented,
      (q, sessionId, address) => findApiKeyWithLivePrincipal(q, sessionId, address, appname),
      req,
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

/** The live principal of session $1 called from address $3 and, only beside it, the key named $2. */
const FIND_WITH_LIVE_PRINCIPAL = preparedStatement(
  'api-keys.find-with-live-principal',
  `SELECT live.*, k.id AS key_id, k.appname AS key_appname, k.description AS key_description, k.role AS key_role,
          k.last_login::float8 AS key_last_login, k.last_ip AS key_last_ip
     FROM (${livePrincipalsWhere('s.id = $1', { address: '$3::inet' })}) AS live
     LEFT JOIN api_keys k ON k.appname = $2`,
);

/**
 * Session `sessionId`'s live principal called from `address` (undefined once the session or its principal is not live) and
 * the key named `appname` (undefined if there is none, or `appname` is null: not a possible appname).
 */
async function findApiKeyWithLivePrincipal(
  q: Queryable,
  sessionId: string,
  address: string | null,
  appname: string | null,
): Promise<{ live: LivePrincipalRow | undefined; alongside: ApiKeyRow | undefined }> {
  const { rows } = await q.queryPrepared<LivePrincipalRow & Prefixed<ApiKeyRow, 'key_'>>(FIND_WITH_LIVE_PRINCIPAL, [sessionId, appname, address]);
  const row = rows[0];
  if (!row) return { live: undefined, alongside: undefined };
  const { key_id, key_appname, key_description, key_role, key_last_login, key_last_ip, ...live } = row;
  const key =
    key_id === null
      ? undefined
      : { id: key_id, appname: key_appname!, description: key_description!, role: key_role, last_login: key_last_login, last_ip: key_last_ip };
  return { live, alongside: key };
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
