import { z } from 'zod';

/** The longest token a leak report may carry: GitHub reports what the registered format matches. */
export const MAX_REPORTED_TOKEN = 4096;
/** The most tokens one report may list: GitHub batches its findings, and this bounds one request's work. */
export const MAX_REPORTED_TOKENS = 1000;

export const selfRevocationBody = z.strictObject({
  /**
   * The key to turn off, exactly as its holders present it. No cap of its own but the 64 KiB body, as
   * on verify and the token routes: an imported key's secret may be of any length.
   */
  key: z.string().min(1, 'must not be empty'),
});

/** One finding, as GitHub's secret scanning partner programme sends it. */
const reportedToken = z.strictObject({
  /** The secret found. */
  token: z.string().min(1).max(MAX_REPORTED_TOKEN),
  /** The name of the token type registered with GitHub. */
  type: z.string().max(200),
  /** Where the token was found (a public URL; may be empty). */
  url: z.string().max(4096),
  /** What kind of content it was found in: content, commit, pull_request_comment, gist_content, npm... */
  source: z.string().max(200),
});

export const secretScanningReport = z
  .array(reportedToken)
  .min(1, `must list 1 to ${MAX_REPORTED_TOKENS} tokens`)
  .max(MAX_REPORTED_TOKENS, `must list 1 to ${MAX_REPORTED_TOKENS} tokens`);

export type SelfRevocationInput = z.output<typeof selfRevocationBody>;
export type SecretScanningReport = z.output<typeof secretScanningReport>;
