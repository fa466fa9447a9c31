import { useState } from 'preact/hooks';
import { describe, queryString } from './api';
import { Dialog } from './dialog';
import { localDateTime } from './format';
import { usePagedList } from './paged-list';
import { call } from './session';
import { ConfirmDialog, NewSecretDialog, WEBHOOKS, WebhookFormDialog, type Webhook, type WebhookWithSecret } from './webhook-dialogs';

const PAGE_SIZE = 50;

interface Delivery {
  id: string;
  type: string;
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  last_status_code: number | null;
  last_error: string | null;
  next_attempt_at: number | null;
  created_at: number;
}

type Open =
  | { kind: 'create' }
  | { kind: 'edit' | 'rotate' | 'delete' | 'deliveries'; webhook: Webhook }
  | { kind: 'secret'; webhook: WebhookWithSecret; rotated: boolean }
  | undefined;

const listWebhooks = async (_query: null, after: string | undefined) => (await call<{ data: Webhook[] }>('GET', `${WEBHOOKS}${queryString({ limit: PAGE_SIZE, after })}`)).data;

/** Webhook endpoints (admins only: the API refuses others, and the console shows no link). */
export function WebhooksPage() {
  const list = usePagedList({ query: null, pageSize: PAGE_SIZE, fetchPage: listWebhooks, cursorOf: (w: Webhook) => w.id, fields: [], debounceMs: () => 0 });
  const { items: webhooks, setItems, state, error } = list;
  const [open, setOpen] = useState<Open>();
  const [notice, setNotice] = useState<string>();
  const close = () => setOpen(undefined);
  const replace = (w: Webhook) => setItems((current) => current.map((x) => (x.id === w.id ? w : x)));

  const sendTest = async (w: Webhook) => {
    try {
      const queued = await call<{ data: Delivery }>('POST', `${WEBHOOKS}/${w.id}/test`);
      setNotice(`Test event ${queued.data.id} queued for ${w.url}: see its deliveries.`);
    } catch (err) {
      setNotice(`The test event was not sent: ${describe(err)}`);
    }
  };

  return (
    <section class="page" aria-labelledby="webhooks-title">
      <div class="page-head">
        <h1 id="webhooks-title">Webhooks</h1>
        <button type="button" class="button button-primary" onClick={() => setOpen({ kind: 'create' })}>
          Create endpoint
        </button>
      </div>
      {notice && (
        <p class="banner banner-success" role="status">
          {notice}
        </p>
      )}
      {state === 'error' ? (
        <div class="banner banner-error" role="alert">
          <span>{error}</span>
          <button type="button" class="button" onClick={list.reload}>
            Try again
          </button>
        </div>
      ) : (
        <div class="table-wrap" aria-busy={state === 'loading'}>
          <table class="table table-cards">
            <thead>
              <tr>
                <th scope="col">URL</th>
                <th scope="col">Events</th>
                <th scope="col">Description</th>
                <th scope="col">Enabled</th>
                <td class="actions-head" />
              </tr>
            </thead>
            <tbody>
              {webhooks.map((w) => (
                <tr key={w.id}>
                  <th scope="row" class="mono url">
                    {w.url}
                  </th>
                  <td data-label="Events">
                    {w.events.map((e) => (
                      <span class="event-type tag">{e === '*' ? 'all events' : e}</span>
                    ))}
                  </td>
                  <td class="description" data-label="Description">
                    {w.description || <span class="muted">—</span>}
                  </td>
                  <td data-label="Enabled">{w.enabled ? 'yes' : <span class="muted">no</span>}</td>
                  <td class="actions">
                    <div class="action-buttons wrap">
                      <button type="button" class="button button-small" onClick={() => setOpen({ kind: 'edit', webhook: w })}>
                        Edit
                      </button>
                      <button type="button" class="button button-small" onClick={() => setOpen({ kind: 'deliveries', webhook: w })}>
                        Deliveries
                      </button>
                      <button type="button" class="button button-small" disabled={!w.enabled} onClick={() => void sendTest(w)}>
                        Send test event
                      </button>
                      <button type="button" class="button button-small" onClick={() => setOpen({ kind: 'rotate', webhook: w })}>
                        Rotate secret
                      </button>
                      <button type="button" class="button button-small button-danger-quiet" onClick={() => setOpen({ kind: 'delete', webhook: w })}>
                        Delete
                      </button>
                    </div>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          {state === 'loading' && <p class="table-state">Loading endpoints…</p>}
          {state === 'ready' && webhooks.length === 0 && <p class="table-state">No endpoints yet. Create one to receive the audit events as they happen.</p>}
        </div>
      )}
      {list.hasMore && state === 'ready' && (
        <div class="more">
          <button type="button" class="button" disabled={list.loadingMore} aria-busy={list.loadingMore} onClick={list.loadMore}>
            Load more
          </button>
        </div>
      )}

      {(open?.kind === 'create' || open?.kind === 'edit') && (
        <WebhookFormDialog
          webhook={open.kind === 'edit' ? open.webhook : undefined}
          onClose={close}
          onSaved={(saved) => {
            if ('secret' in saved) {
              setOpen({ kind: 'secret', webhook: saved, rotated: false });
              setNotice(`Endpoint ${saved.url} created.`);
              list.reload();
            } else {
              replace(saved);
              close();
              setNotice(`Endpoint ${saved.url} saved.`);
            }
          }}
        />
      )}
      {open?.kind === 'rotate' && (
        <ConfirmDialog
          title="Rotate secret"
          action="Rotate secret"
          text={`A new signing secret replaces the current one of ${open.webhook.url}. For 24 hours messages carry a signature by each, so the receiver can switch over.`}
          onClose={close}
          send={async () => {
            const rotated = await call<{ data: WebhookWithSecret }>('POST', `${WEBHOOKS}/${open.webhook.id}/rotate-secret`);
            setOpen({ kind: 'secret', webhook: rotated.data, rotated: true });
          }}
        />
      )}
      {open?.kind === 'delete' && (
        <ConfirmDialog
          title="Delete endpoint"
          action="Delete"
          danger
          text={`${open.webhook.url} is deleted with its delivery log, and receives nothing more. This cannot be undone.`}
          onClose={close}
          send={async () => {
            await call('DELETE', `${WEBHOOKS}/${open.webhook.id}`);
            setItems((current) => current.filter((x) => x.id !== open.webhook.id));
            close();
            setNotice(`Endpoint ${open.webhook.url} deleted.`);
          }}
        />
      )}
      {open?.kind === 'secret' && <NewSecretDialog webhook={open.webhook} rotated={open.rotated} onClose={close} />}
      {open?.kind === 'deliveries' && <DeliveriesDialog webhook={open.webhook} onClose={close} />}
    </section>
  );
}

const listDeliveries = async (id: string, after: string | undefined) => (await call<{ data: Delivery[] }>('GET', `${WEBHOOKS}/${id}/deliveries${queryString({ limit: 20, after })}`)).data;

/** The delivery log of one endpoint, newest first. */
function DeliveriesDialog(props: { webhook: Webhook; onClose: () => void }) {
  const list = usePagedList({ query: props.webhook.id, pageSize: 20, fetchPage: listDeliveries, cursorOf: (d: Delivery) => d.id, fields: [], debounceMs: () => 0 });
  return (
    <Dialog title={`Deliveries to ${props.webhook.url}`} onClose={props.onClose} wide class="dialog-log">
      {list.state === 'error' && (
        <p class="banner banner-error" role="alert">
          {list.error}
        </p>
      )}
      <div class="table-wrap deliveries" aria-busy={list.state === 'loading'}>
        {/* Cards on a phone, like the endpoints: five columns do not fit a dialog 336 px wide. */}
        <table class="table table-cards">
          <thead>
            <tr>
              <th scope="col">Type</th>
              <th scope="col">Status</th>
              <th scope="col">Attempts</th>
              <th scope="col">Last answer</th>
              <th scope="col">Next attempt</th>
            </tr>
          </thead>
          <tbody>
            {list.items.map((d) => (
              <tr key={d.id} title={d.id}>
                <th scope="row" class="event-type">
                  {d.type}
                </th>
                <td data-label="Status">
                  <span class={`status status-${d.status}`}>{d.status}</span>
                </td>
                <td data-label="Attempts">{d.attempts}</td>
                <td data-label="Last answer">{d.last_status_code ?? d.last_error?.replace(/_/g, ' ') ?? <span class="muted">—</span>}</td>
                <td data-label="Next attempt">{d.next_attempt_at !== null ? localDateTime(d.next_attempt_at) : <span class="muted">—</span>}</td>
              </tr>
            ))}
          </tbody>
        </table>
        {list.state === 'ready' && list.items.length === 0 && <p class="table-state">Nothing sent yet.</p>}
      </div>
      <div class="dialog-actions">
        <button type="button" class="button" onClick={list.reload}>
          Refresh
        </button>
        {list.hasMore && (
          <button type="button" class="button" disabled={list.loadingMore} onClick={list.loadMore}>
            Load more
          </button>
        )}
        <button type="button" class="button" onClick={props.onClose}>
          Close
        </button>
      </div>
    </Dialog>
  );
}
