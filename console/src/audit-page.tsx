import { useState } from 'preact/hooks';
import { queryString, type AuditEvent } from './api';
import { Field } from './dialog';
import { localDateTime } from './format';
import { usePagedList } from './paged-list';
import { call } from './session';
import { AUDIT_EVENT_TYPES } from '../../src/shared/audit-context';

const PAGE_SIZE = 50;
// The server's own list: an event type added there shows up here with the next build.
const TYPES = AUDIT_EVENT_TYPES;

interface Filters {
  type: string;
  appname: string;
  username: string;
  /** datetime-local values: local time, no zone; sent as ISO instants. */
  since: string;
  until: string;
}

const NO_FILTERS: Filters = { type: '', appname: '', username: '', since: '', until: '' };
const FIELDS = ['type', 'appname', 'username', 'since', 'until'] as const;

function instant(local: string): string | undefined {
  if (!local) return undefined;
  const date = new Date(local);
  return Number.isNaN(date.getTime()) ? local : date.toISOString();
}

const listEvents = async (f: Filters, before: number | undefined) => {
  const query = queryString({
    limit: PAGE_SIZE,
    before,
    type: f.type,
    appname: f.appname.trim(),
    username: f.username.trim(),
    since: instant(f.since),
    until: instant(f.until),
  });
  return (await call<{ data: AuditEvent[] }>('GET', `/api/v1/audit-events${query}`)).data;
};

/** The audit trail, newest first (admins only: the API refuses others, and the console shows no link). */
export function AuditPage() {
  const [filters, setFilters] = useState<Filters>(NO_FILTERS);
  const list = usePagedList({
    query: filters,
    pageSize: PAGE_SIZE,
    fetchPage: listEvents,
    cursorOf: (event: AuditEvent) => event.id,
    fields: FIELDS,
    // Typing a name waits for a pause; a choice from a list or a date picker loads at once.
    debounceMs: (f) => (f.appname || f.username ? 300 : 0),
  });
  const { items: events, state, error, fieldErrors } = list;

  const set = (name: keyof Filters) => (event: { currentTarget: { value: string } }) => {
    const value = event.currentTarget.value;
    setFilters((current) => ({ ...current, [name]: value }));
  };
  const filtered = FIELDS.some((name) => filters[name] !== '');

  const input = (name: 'appname' | 'username' | 'since' | 'until', label: string) => (
    <Field label={label} error={fieldErrors[name]}>
      {({ id, describedBy }) => (
        name === 'since' || name === 'until' ? (
          <input
            id={id}
            type="datetime-local"
            aria-describedby={describedBy}
            aria-invalid={fieldErrors[name] ? true : undefined}
            value={filters[name]}
            onInput={set(name)}
          />
        ) : (
          <input
            id={id}
            type="search"
            autocomplete="off"
            spellcheck={false}
            aria-describedby={describedBy}
            aria-invalid={fieldErrors[name] ? true : undefined}
            value={filters[name]}
            onInput={set(name)}
          />
        )
      )}
    </Field>
  );

  return (
    <section class="page" aria-labelledby="audit-title">
      <div class="page-head">
        <h1 id="audit-title">Audit log</h1>
        <button type="button" class="button" disabled={!filtered} onClick={() => setFilters(NO_FILTERS)}>
          Clear filters
        </button>
      </div>
      <form class="filters" role="search" aria-label="Audit log filters" onSubmit={(e) => e.preventDefault()}>
        <Field label="Type" error={fieldErrors.type}>
          {({ id, describedBy }) => (
            <select id={id} aria-describedby={describedBy} value={filters.type} onChange={set('type')}>
              <option value="">any type</option>
              {TYPES.map((type) => (
                <option value={type}>{type}</option>
              ))}
            </select>
          )}
        </Field>
        {input('appname', 'Appname')}
        {input('username', 'Username')}
        {input('since', 'Since')}
        {input('until', 'Until')}
      </form>
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
                <th scope="col">Time</th>
                <th scope="col">Type</th>
                <th scope="col">Actor</th>
                <th scope="col">Appname</th>
                <th scope="col">Username</th>
                <th scope="col">Client address</th>
              </tr>
            </thead>
            <tbody>
              {events.map((event) => (
                <tr key={event.id}>
                  <th scope="row" class="nowrap time">{localDateTime(event.occurred_at)}</th>
                  <td data-label="Type">
                    <span class="event-type">{event.type}</span>
                  </td>
                  <td class="mono" data-label="Actor">{event.actor}</td>
                  <td class="mono" data-label="Appname">{event.appname ?? <span class="muted">—</span>}</td>
                  <td class="mono" data-label="Username">{event.username ?? <span class="muted">—</span>}</td>
                  <td class="mono" data-label="Client address">{event.client_address ?? <span class="muted">—</span>}</td>
                </tr>
              ))}
            </tbody>
          </table>
          {state === 'loading' && <p class="table-state">Loading events…</p>}
          {state === 'ready' && events.length === 0 && !Object.keys(fieldErrors).length && (
            <p class="table-state">{filtered ? 'No event matches these filters.' : 'No events yet.'}</p>
          )}
        </div>
      )}
      {error && state !== 'error' && (
        <p class="banner banner-error" role="alert">
          {error}
        </p>
      )}
      {list.hasMore && state === 'ready' && (
        <div class="more">
          <button type="button" class="button" disabled={list.loadingMore} aria-busy={list.loadingMore} onClick={list.loadMore}>
            Load more
          </button>
        </div>
      )}
    </section>
  );
}
