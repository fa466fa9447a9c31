import type { Agent } from 'undici';
import { AddressRefusedError, checkedLookup, checkUrlShape, type Resolve } from './address-rules';
import type { DeliveryError } from './webhooks.responses';

/** What one POST came to: an answer's status, or why there was none. */
export type SendResult = { statusCode: number } | { error: Exclude<DeliveryError, 'non_2xx' | 'event_pruned'> };

const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

/** A receiver's answer is read and dropped; more than this is not read at all. */
const MAX_ANSWER_BYTES = 64 * 1024;

function causes(err: unknown): { code?: string; name?: string }[] {
  const chain: { code?: string; name?: string }[] = [];
  for (let at = err as { code?: string; name?: string; cause?: unknown } | undefined; at && chain.length < 5; at = at.cause as typeof at) chain.push(at);
  return chain;
}

/**
 * POSTs messages with undici: kept-alive connections per receiver, no redirect ever followed (undici's
 * request follows none), WEBHOOK_TIMEOUT_MS for the whole attempt, and every connection made to an
 * address resolved (and, unless insecure, checked public) in the same step (checkedLookup), after
 * the URL itself was checked again.
 */
export class WebhookSender {
  /** Made at the first send: undici is loaded only by an instance that has messages to send (docs/performance.md, "memory"). */
  private client: Promise<{ agent: Agent; request: typeof import('undici').request }> | undefined;

  constructor(
    private readonly settings: { timeoutMs: number; allowInsecure: boolean; maxInFlight: number },
    private readonly resolve: Resolve,
  ) {}

  private connect() {
    this.client ??= import('undici').then(({ Agent, request }) => ({
      request,
      agent: new Agent({
        connect: { timeout: this.settings.timeoutMs, lookup: checkedLookup(this.resolve, this.settings.allowInsecure) },
        connections: this.settings.maxInFlight,
        headersTimeout: this.settings.timeoutMs,
        bodyTimeout: this.settings.timeoutMs,
        keepAliveTimeout: 10_000,
      }),
    }));
    return this.client;
  }

  async send(url: string, headers: Record<string, string>, body: string): Promise<SendResult> {
    try {
      checkUrlShape(url, this.settings.allowInsecure);
    } catch (err) {
      if (err instanceof AddressRefusedError) return { error: 'address_refused' };
      throw err;
    }
    const { agent, request } = await this.connect();
    // One deadline for the whole attempt (resolving, connecting, sending, the answer's headers and
    // body): undici's own timers restart at each stage and each chunk, so a receiver that trickles its
    // answer could hold an attempt, and the dispatcher's lease, for as long as it liked.
    const deadline = AbortSignal.timeout(this.settings.timeoutMs);
    try {
      const answer = await request(url, { method: 'POST', headers, body, dispatcher: agent, signal: deadline });
      // The status is the outcome; the body is read (so the connection can be kept) only within the deadline.
      await answer.body.dump({ limit: MAX_ANSWER_BYTES, signal: deadline }).catch(() => undefined);
      return { statusCode: answer.statusCode };
    } catch (err) {
      const chain = causes(err);
      if (chain.some((e) => e.code === 'WEBHOOK_ADDRESS_REFUSED')) return { error: 'address_refused' };
      if (chain.some((e) => e.code === 'WEBHOOK_HOST_NOT_RESOLVED')) return { error: 'dns_failed' };
      if (deadline.aborted || chain.some((e) => TIMEOUT_CODES.has(e.code ?? ''))) return { error: 'timeout' };
      return { error: 'network_error' };
    }
  }

  async close(): Promise<void> {
    if (this.client) await (await this.client).agent.close();
  }
}
