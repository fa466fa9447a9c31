import { randomUUID } from 'node:crypto';
import type { Database, Queryable } from '../db/database';
import type { SecretBox } from '../crypto/secretbox';
import { recordAuditEvent } from '../audit-trail/audit-trail';
import { contextOf, type AuditEventType, type RequestOrigin } from '../shared/audit-context';
import { badRequest, conflict, forbidden, notFound } from '../shared/errors';
import { allows, type Principal } from '../shared/principals';
import { AddressRefusedError, checkEndpointUrl, HostNotResolvedError, hostOf, systemResolve, type Resolve } from './address-rules';
import { deliveryIdOf, formatSecret, generateSecret, secretBinding } from './signer';
import { WebhookDispatcher, type DispatcherOptions, type DispatcherSettings } from './dispatcher';
import type { Logger } from '../logger';
import * as repo from './webhooks.repository';
import { findDeliveryOfEvent, listDeliveries, type DeliveryRow } from './deliveries.repository';
import type { CreateWebhookInput, ListDeliveriesInput, ListWebhooksInput, UpdateWebhookInput } from './webhooks.schemas';

/** How long the replaced secret keeps signing after a rotation: receivers switch within a day. */
export const PREVIOUS_SECRET_SECONDS = 24 * 3600;

export interface WebhookWithSecret {
  webhook: repo.WebhookRow;
  secret: string;
}

/** The endpoints API: admins only, every change audited in the transaction that makes it. */
export class WebhooksService {
  constructor(
    private readonly db: Database,
    private readonly box: SecretBox,
    private readonly settings: DispatcherSettings,
    private readonly resolve: Resolve = systemResolve,
  ) {}

  async list(principal: Principal, page: ListWebhooksInput): Promise<repo.WebhookRow[]> {
    assertAdmin(principal);
    return repo.listWebhooks(this.db, page);
  }

  async get(principal: Principal, id: string): Promise<repo.WebhookRow> {
    assertAdmin(principal);
    return (await repo.findWebhook(this.db, id)) ?? throwNotFound(id);
  }

  async create(principal: Principal, input: CreateWebhookInput, origin: RequestOrigin): Promise<WebhookWithSecret> {
    assertAdmin(principal);
    const url = await this.checkedUrl(input.url);
    const id = randomUUID();
    const secret = generateSecret();
    return this.db.withTransaction(async (tx) => {
      const webhook = await repo.insertWebhook(tx, { id, url, events: input.events, description: input.description, secretCiphertext: this.box.seal(secret, secretBinding(id)) });
      await this.audit(tx, principal, origin, 'webhook.created', webhook);
      return { webhook, secret: formatSecret(secret) };
    });
  }

  /** Replaces url, events, description and enabled; the URL is checked again only when it changes. */
  async update(principal: Principal, id: string, input: UpdateWebhookInput, origin: RequestOrigin): Promise<repo.WebhookRow> {
    assertAdmin(principal);
    const before = (await repo.findWebhook(this.db, id)) ?? throwNotFound(id);
    const url = before.url === input.url ? input.url : await this.checkedUrl(input.url);
    return this.db.withTransaction(async (tx) => {
      const current = (await repo.findWebhookForUpdate(tx, id)) ?? throwNotFound(id);
      // Checked against the URL read before the check: a change in between is refused, not overwritten unchecked.
      if (current.url !== before.url && current.url !== url) throw conflict('The endpoint changed meanwhile; read it again');
      const webhook = await repo.updateWebhook(tx, id, { url, events: input.events, description: input.description, enabled: input.enabled });
      await this.audit(tx, principal, origin, 'webhook.updated', webhook);
      return webhook;
    });
  }

  async delete(principal: Principal, id: string, origin: RequestOrigin): Promise<void> {
    assertAdmin(principal);
    await this.db.withTransaction(async (tx) => {
      const webhook = (await repo.findWebhookForUpdate(tx, id)) ?? throwNotFound(id);
      await repo.deleteWebhook(tx, id);
      await this.audit(tx, principal, origin, 'webhook.deleted', webhook);
    });
  }

  /** A new secret, shown once; the replaced one keeps signing too for PREVIOUS_SECRET_SECONDS. */
  async rotateSecret(principal: Principal, id: string, origin: RequestOrigin): Promise<WebhookWithSecret> {
    assertAdmin(principal);
    const secret = generateSecret();
    return this.db.withTransaction(async (tx) => {
      if (!(await repo.findWebhookForUpdate(tx, id))) throwNotFound(id);
      const webhook = await repo.rotateWebhookSecret(tx, id, this.box.seal(secret, secretBinding(id)), PREVIOUS_SECRET_SECONDS);
      await this.audit(tx, principal, origin, 'webhook.secret_rotated', webhook);
      return { webhook, secret: formatSecret(secret) };
    });
  }

  async deliveries(principal: Principal, id: string, page: ListDeliveriesInput): Promise<DeliveryRow[]> {
    assertAdmin(principal);
    if (!(await repo.findWebhook(this.db, id))) throwNotFound(id);
    return listDeliveries(this.db, id, { limit: page.limit, before: page.after && deliveryIdOf(page.after), status: page.status });
  }

  /**
   * A test message: the audit event webhook.tested, which the trigger of migrations/0032 turns into a
   * message for this endpoint alone, so the test goes the whole way a real event goes.
   */
  async sendTest(principal: Principal, id: string, origin: RequestOrigin): Promise<DeliveryRow> {
    assertAdmin(principal);
    return this.db.withTransaction(async (tx) => {
      const webhook = (await repo.findWebhookForUpdate(tx, id)) ?? throwNotFound(id);
      if (!webhook.enabled) throw conflict('The endpoint is disabled: enable it to send it a test message');
      const eventId = await this.audit(tx, principal, origin, 'webhook.tested', webhook);
      return (await findDeliveryOfEvent(tx, id, eventId))!;
    });
  }

  /** This instance's dispatcher, not started: the server starts it, and stops it before closing the pool. */
  dispatcher(logger: Logger, listeners: Pick<DispatcherOptions, 'onOutcome' | 'onLag'> = {}): WebhookDispatcher {
    return new WebhookDispatcher(this.db, this.box, this.settings, logger, { resolve: this.resolve, ...listeners });
  }

  /** `keys rewrap`: every endpoint secret sealed under the previous MASTER_KEY sealed again under the current one. */
  async resealSecrets(tx: Queryable): Promise<number> {
    let resealed = 0;
    for (const row of await repo.lockSealedWebhookSecrets(tx)) {
      const current = this.box.reseal(row.secret_ciphertext, secretBinding(row.id)) ?? null;
      const previous = row.previous_secret_ciphertext ? (this.box.reseal(row.previous_secret_ciphertext, secretBinding(row.id)) ?? null) : null;
      if (!current && !previous) continue;
      await repo.updateSealedWebhookSecrets(tx, row.id, current, previous);
      resealed += Number(current !== null) + Number(previous !== null);
    }
    return resealed;
  }

  private async checkedUrl(url: string): Promise<string> {
    try {
      return await checkEndpointUrl(url, this.settings.allowInsecure, this.resolve);
    } catch (err) {
      if (err instanceof AddressRefusedError || err instanceof HostNotResolvedError) throw badRequest(`body.url: ${err.message}`);
      throw err;
    }
  }

  /** Records the event about an endpoint (never its secret; of its URL, only the host); returns the event's id. */
  private async audit(tx: Queryable, principal: Principal, origin: RequestOrigin, type: AuditEventType, webhook: repo.WebhookRow): Promise<string> {
    return recordAuditEvent(tx, contextOf(principal, origin), {
      type,
      details: { webhook_id: webhook.id, host: hostOf(new URL(webhook.url)), events: webhook.events, enabled: webhook.enabled },
    });
  }
}

function assertAdmin(principal: Principal): void {
  if (!allows.administer(principal)) throw forbidden('Webhooks are for admins only');
}

function throwNotFound(id: string): never {
  throw notFound(`No webhook endpoint with id ${id}`);
}
