import { appendFileSync } from 'node:fs';

/** Why some tests cannot run here, and what would let them: said once, at the end of the run. */
export interface SkipReason {
  /** The tests skipped, e.g. "the console's browser tests". */
  what: string;
  /** Why, and what to install or set to run them. */
  why: string;
}

/**
 * Records a skip for the run's summary (test/skip-reporter.cjs prints each reason once, under
 * Jest's own summary). TEST_SKIPS_FILE is set by the global setup; a file run without it (never
 * under npm test) says it on the spot instead.
 */
export function announceSkip({ what, why }: SkipReason): void {
  const file = process.env.TEST_SKIPS_FILE;
  if (file) appendFileSync(file, `${JSON.stringify({ what, why })}\n`);
  else console.warn(`skipped: ${what}: ${why}`);
}

/** `describe`, or `describe.skip` with its reason announced when `skip` is given. */
export function describeUnless(skip: SkipReason | false | undefined): jest.Describe {
  if (!skip) return describe;
  announceSkip(skip);
  return describe.skip;
}

/** `it`, or `it.skip` with its reason announced when `skip` is given. */
export function itUnless(skip: SkipReason | false | undefined): jest.It {
  if (!skip) return it;
  announceSkip(skip);
  return it.skip;
}
