import { randomUUID } from 'node:crypto';
import type { Database } from '../db/database';
import type { SecretBox } from '../crypto/secretbox';
import type { Logger } from '../logger';
import { presentAuditEvent } from '../audit-events/audit-events.presenter';
import { systemResolve, type Resolve } from './address-rules';
import { leaseDueEndpoints, oldestDueAgeSeconds, readDueMessages, recordOutcomes, releaseLease, type AttemptOutcome, type DueMessage, type LeasedEndpoint } from './deliveries.repository';
import { WebhookSender, type SendResult } from './sender';
import { messageIdOf, secretBinding, signedHeaders } from './signer';

export interface DispatcherSettings {
  timeoutMs: number;
  retryScheduleMs: readonly number[];
  allowInsecure: boolean;
  pollIntervalMs: number;
  maxInFlight: number;
}

/** An attempt's outcome as metrics count it. */
export type DeliveryOutcome = 'delivered' | 'retrying' | 'failed';

export interface DispatcherOptions {
  /** How host names are resolved (the system's resolver unless a test gives another). */
  resolve?: Resolve;
  /** Told each attempt's outcome (metrics). */
  onOutcome?: (outcome: DeliveryOutcome) => void;
  /** Told, at each poll, how long the oldest due message has waited (metrics); unset, nothing is measured. */
  onLag?: (oldestDueAgeSeconds: number) => void;
}

/** Messages read (and sent) per round of one endpoint. */
const BATCH_SIZE = 100;
/** Endpoints one instance delivers to at once. */
const ENDPOINTS_AT_ONCE = 16;

/** Attempts that end the delivery at once: retrying changes nothing. */
const FINAL_ERRORS = new Set(['address_refused', 'event_pruned']);

/** The next state of a message after one attempt, by the retry schedule. */
export function outcomeOf(message: DueMessage, result: SendResult | { error: 'event_pruned' }, scheduleMs: readonly number[]): AttemptOutcome {
  const attempts = message.attempts + 1;
  if ('statusCode' in result && result.statusCode >= 200 && result.statusCode < 300) {
    return { id: message.id, status: 'delivered', attempts, statusCode: result.statusCode, error: null, retryInMs: null };
  }
  const statusCode = 'statusCode' in result ? result.statusCode : null;
  const error = 'error' in result ? result.error : 'non_2xx';
  const delay = FINAL_ERRORS.has(error) ? undefined : scheduleMs[attempts - 1];
  return delay === undefined
    ? { id: message.id, status: 'failed', attempts, statusCode, error, retryInMs: null }
    : { id: message.id, status: 'pending', attempts, statusCode, error, retryInMs: delay };
}

/**
 * Delivers the outbox (migrations/0031) from every instance: each polls, leases endpoints that have
 * due messages (one instance per endpoint at a time, so an endpoint gets its messages in the order of
 * their events), reads them in short statements, sends them outside any transaction, and records
 * the outcomes, which also renews the lease. An instance that dies mid-send leaves its lease to run
 * out, and another sends again what was not recorded: at least once, and receivers deduplicate by
 * `webhook-id`. Polling alone suffices: no LISTEN, which PgBouncer's transaction pooling cannot carry.
 */
export class WebhookDispatcher {
  private readonly sender: WebhookSender;
  /** Long enough for a round's last send to finish; a round starts no send that could outlive it. */
  private readonly leaseMs: number;
  private readonly active = new Map<string, Promise<void>>();
  private stopping = false;
  private timer: NodeJS.Timeout | undefined;
  private polling: Promise<void> = Promise.resolve();
  private failing = false;

  constructor(
    private readonly db: Database,
    private readonly box: SecretBox,
    private readonly settings: DispatcherSettings,
    private readonly logger: Logger,
    private readonly options: DispatcherOptions = {},
  ) {
    this.sender = new WebhookSender(settings, options.resolve ?? systemResolve);
    // A send takes at most WEBHOOK_TIMEOUT_MS (the sender's one deadline), and none starts that could outlive the lease.
    this.leaseMs = 2 * settings.timeoutMs + 5_000;
  }

  /** Polls every WEBHOOK_POLL_INTERVAL_MS, timed from the end of the last poll. */
  start(): void {
    const schedule = () => {
      this.timer = setTimeout(() => {
        this.polling = this.poll()
          .then(() => {
            this.failing = false;
          })
          .catch((err: Error) => this.warnOnce(err, 'webhook dispatch: looking for due messages failed'))
          .finally(() => {
            if (!this.stopping) schedule();
          });
      }, this.settings.pollIntervalMs);
      this.timer.unref();
    };
    schedule();
  }

  /** Starts no more sends; the ones in flight finish (within WEBHOOK_TIMEOUT_MS) and are recorded, and leases are given back. */
  async stop(): Promise<void> {
    this.stopping = true;
    clearTimeout(this.timer);
    await this.polling;
    await Promise.all(this.active.values());
    await this.sender.close();
  }

  /** One poll, and every delivery it starts run to its end (for tests and tools; the service polls by start()). */
  async runOnce(): Promise<void> {
    await this.poll();
    await Promise.all(this.active.values());
  }

  /** Leases what is due and starts delivering it, without waiting for the deliveries. */
  private async poll(): Promise<void> {
    if (this.stopping) return;
    if (this.options.onLag) this.options.onLag(await oldestDueAgeSeconds(this.db));
    if (this.active.size >= ENDPOINTS_AT_ONCE) return;
    const leaseId = randomUUID();
    const leased = await leaseDueEndpoints(this.db, leaseId, this.leaseMs, ENDPOINTS_AT_ONCE - this.active.size);
    const leasedAt = Date.now();
    for (const endpoint of leased) {
      if (this.active.has(endpoint.id)) continue;
      const run = this.deliverTo(endpoint, leaseId, leasedAt).finally(() => this.active.delete(endpoint.id));
      this.active.set(endpoint.id, run);
    }
  }

  /** Rounds of one endpoint while it has due messages and this instance holds its lease. */
  private async deliverTo(endpoint: LeasedEndpoint, leaseId: string, leasedAt: number): Promise<void> {
    let held = true;
    let leaseEnds = leasedAt + this.leaseMs;
    try {
      while (!this.stopping) {
        // The endpoint is read again with each batch: a change to it (URL, secret, disabled, deleted)
        // holds from the next batch, even for an endpoint whose traffic keeps its lease for hours.
        const batch = await readDueMessages(this.db, endpoint.id, BATCH_SIZE);
        if (!batch || !batch.target.enabled || batch.messages.length === 0) break;
        const { target, messages } = batch;
        const secrets = [this.box.open(target.secret_ciphertext, secretBinding(endpoint.id))];
        if (target.previous_secret_ciphertext) secrets.push(this.box.open(target.previous_secret_ciphertext, secretBinding(endpoint.id)));
        const outcomes = await this.sendInOrder(target.url, secrets, messages, () => leaseEnds);
        if (outcomes.length === 0) break;
        const recordedAt = Date.now();
        held = await recordOutcomes(this.db, endpoint.id, leaseId, this.leaseMs, outcomes);
        if (!held) {
          this.logger.warn({ webhookId: endpoint.id }, 'webhook dispatch: the lease ran out before the outcomes were recorded; another instance sends them again');
          return;
        }
        leaseEnds = recordedAt + this.leaseMs;
        for (const o of outcomes) this.options.onOutcome?.(o.status === 'pending' ? 'retrying' : o.status);
        if (outcomes.length < messages.length) break;
      }
      this.failing = false;
    } catch (err) {
      this.warnOnce(err as Error, 'webhook dispatch: delivering to an endpoint failed; its lease runs out and it is tried again', endpoint.id);
    } finally {
      if (held) await releaseLease(this.db, endpoint.id, leaseId).catch(() => undefined);
    }
  }

  /**
   * Sends in the order given, at most WEBHOOK_MAX_IN_FLIGHT at once, and starts none once stopping
   * or when it could outlive the lease. Returns the outcomes of the messages it sent.
   */
  private async sendInOrder(url: string, secrets: Buffer[], messages: DueMessage[], leaseEnds: () => number): Promise<AttemptOutcome[]> {
    const outcomes: AttemptOutcome[] = [];
    let next = 0;
    const worker = async () => {
      while (next < messages.length && !this.stopping && Date.now() + this.settings.timeoutMs + 1_000 < leaseEnds()) {
        const message = messages[next++]!;
        outcomes.push(await this.attempt(url, secrets, message));
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.settings.maxInFlight, messages.length) }, worker));
    return outcomes;
  }

  private async attempt(url: string, secrets: Buffer[], message: DueMessage): Promise<AttemptOutcome> {
    // Audit retention deleted the event before its message went out (only with a retention shorter than the retries).
    if (!message.event) return outcomeOf(message, { error: 'event_pruned' }, this.settings.retryScheduleMs);
    const event = presentAuditEvent(message.event);
    const body = JSON.stringify({ type: event.type, timestamp: event.occurred_at, data: event });
    const headers = {
      'content-type': 'application/json',
      'user-agent': 'api-key-token-service-webhooks/1',
      ...signedHeaders(messageIdOf(message.id), body, secrets, Math.floor(Date.now() / 1000)),
    };
    return outcomeOf(message, await this.sender.send(url, headers, body), this.settings.retryScheduleMs);
  }

  /** One warning per run of failures (a database outage would otherwise log at every poll). */
  private warnOnce(err: Error, message: string, webhookId?: string): void {
    if (this.failing) return;
    this.failing = true;
    this.logger.warn({ cause: err.message, webhookId }, message);
  }
}
