import { Coalescer } from '../db/coalescer';
import type { Database } from '../db/database';
import { rotateRefreshTokens, type RefreshRotation, type RotatedRefresh } from './rotation';

/**
 * Refresh rotations. Concurrent ones share one statement and one commit (docs/performance.md,
 * "refresh"); such a batch skips sessions locked elsewhere, and what it did not rotate is tried alone,
 * waiting its turn, so the answer is the same as if each had gone alone.
 */
export class RefreshRotations {
  private readonly batches: Coalescer<RefreshRotation, RotatedRefresh | undefined>;

  constructor(private readonly db: Database) {
    this.batches = new Coalescer((rotations) => rotateRefreshTokens(db, rotations, 'skip'), { maxInFlight: 1, maxBatch: 128 });
  }

  /** The rotated session's principal and times, or undefined when the token is spent or its session not live. */
  async rotate(rotation: RefreshRotation): Promise<RotatedRefresh | undefined> {
    return (await this.batches.submit(rotation)) ?? (await rotateRefreshTokens(this.db, [rotation], 'wait'))[0];
  }
}
