import { Agent, request } from 'undici';
import { AddressRefusedError, checkedLookup, checkUrlShape, type Resolve } from './address-rules';
import type { DeliveryError } from './webhooks.responses';

/** What one POST came to: an answer's status, or why there was none. */
export type SendResult = { statusCode: number } | { error: Exclude<DeliveryError, 'non_2xx' | 'event_pruned'> };

const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'ABORT_ERR']);

/** A receiver's answer is read and dropped; more than this is not read at all. */
const MAX_ANSWER_BYTES = 64 * 1024;

function causes(err: unknown): { code?: string; name?: string }[] {
  const chain: { code?: string; name?: string }[] = [];
  for (let at = err as { code?: string; name?: string; cause?: unknown } | undefined; at && chain.length < 5; at = at.cause as typeof at) chain.push(at);
  return chain;
}

/**
 * POSTs messages with undici: kept-alive connections per receiver, no redirect ever followed (undici's
 * request follows none), one deadline per attempt from the connection to the end of the answer, and,
 * unless insecure, every connection made to an address that was resolved and checked public in the
 * same step (checkedLookup), after the URL itself was checked again.
 */
export class WebhookSender {
  private readonly agent: Agent;

  constructor(
    private readonly settings: { timeoutMs: number; allowInsecure: boolean; maxInFlight: number },
    resolve: Resolve,
  ) {
    this.agent = new Agent({
      connect: { timeout: settings.timeoutMs, ...(settings.allowInsecure ? {} : { lookup: checkedLookup(resolve) }) },
      connections: settings.maxInFlight,
      headersTimeout: settings.timeoutMs,
      bodyTimeout: settings.timeoutMs,
      keepAliveTimeout: 10_000,
    });
  }

  async send(url: string, headers: Record<string, string>, body: string): Promise<SendResult> {
    try {
      checkUrlShape(url, this.settings.allowInsecure);
    } catch (err) {
      if (err instanceof AddressRefusedError) return { error: 'address_refused' };
      throw err;
    }
    const signal = AbortSignal.timeout(this.settings.timeoutMs);
    try {
      const answer = await request(url, { method: 'POST', headers, body, dispatcher: this.agent, signal });
      await answer.body.dump({ limit: MAX_ANSWER_BYTES }).catch(() => undefined);
      return { statusCode: answer.statusCode };
    } catch (err) {
      const chain = causes(err);
      if (chain.some((e) => e.code === 'WEBHOOK_ADDRESS_REFUSED')) return { error: 'address_refused' };
      if (signal.aborted || chain.some((e) => TIMEOUT_CODES.has(e.code ?? '') || e.name === 'TimeoutError')) return { error: 'timeout' };
      return { error: 'network_error' };
    }
  }

  close(): Promise<void> {
    return this.agent.close();
  }
}
