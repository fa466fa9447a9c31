import type { Request } from 'express';
import type { BearerAuthenticator } from '../bearer/bearer-authenticator';
import type { Authenticator, PresentedAccessToken } from '../http/authenticate';
import { sha256 } from '../crypto/digest';
import type { Principal } from '../shared/principals';
import { Coalescer } from '../db/coalescer';
import type { Queryable } from '../db/database';
import { findKeysWithLivePrincipals, type KeyLookup, type LookedUp, type VerifiedKeyRow } from './verify.repository';

/** The key read beside the bearer check: the value presented, its digest, the moment, and what was found (undefined: no such key). */
export interface KeyReadAlong {
  presented: string;
  digest: Buffer;
  now: number;
  key: VerifiedKeyRow | undefined;
}

/**
 * POST /api/v1/keys/verify in one database round trip (docs/performance.md, "verification"): the
 * bearer check's liveness statement also reads the presented key by its digest, as
 * api-keys/key-read-along.ts does for GET /{appname}, and concurrent verifications share that
 * statement (a lone one goes at once). The body is parsed before the bearer check for that (its
 * errors are told after it, in the usual order). As the route's Authenticator it answers exactly as
 * the bearer check does; what it read waits, tied to the principal it returned.
 */
export class VerifyReadAlong implements Authenticator {
  private readonly read = new WeakMap<Principal, KeyReadAlong>();
  private readonly batches: Coalescer<KeyLookup, LookedUp>;

  constructor(
    db: Queryable,
    private readonly bearer: BearerAuthenticator,
    /** Whether a presented value needs a lookup at all (KeyVerifier.looksUp), and the moment it is read at. */
    private readonly lookup: { looksUp(key: string): boolean; now(): number },
  ) {
    // One batch at a time: the verifications that queue behind it form the next, larger batch
    // (docs/performance.md, "verification": one in flight did better than two).
    this.batches = new Coalescer((lookups) => findKeysWithLivePrincipals(db, lookups), { maxInFlight: 1, maxBatch: 128 });
  }

  async authenticate(presented: PresentedAccessToken, req: Request): Promise<Principal> {
    const key = (req.body as { key?: unknown } | undefined)?.key;
    if (typeof key !== 'string' || !this.lookup.looksUp(key)) return this.bearer.authenticate(presented, req);
    const digest = sha256(key);
    const now = this.lookup.now();
    const { principal, alongside } = await this.bearer.authenticateReading(presented, (_q, sessionId, address) => this.batches.submit({ sessionId, address, digest, now }), req);
    this.read.set(principal, { presented: key, digest, now, key: alongside });
    return principal;
  }

  /** What was read beside the bearer check of `principal`'s call, if anything. */
  readFor(principal: Principal): KeyReadAlong | undefined {
    return this.read.get(principal);
  }
}
