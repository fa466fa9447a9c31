import { useState } from 'preact/hooks';
import { queryString, type AuditEvent } from './api';
import { Field } from './dialog';
import { localDateTime } from './format';
import { usePagedList } from './paged-list';
import { call } from './session';
import { useQueryState } from './url-state';
import { AUDIT_EVENT_TYPES } from '../../src/shared/audit-context';

const PAGE_SIZE = 50;
// The server's own list: an event type added there shows up here with the next build.
const TYPES = AUDIT_EVENT_TYPES;

/** The filters as the URL and the API have them: since and until as ISO instants. */
const FIELDS = ['type', 'appname', 'username', 'since', 'until'] as const;
type Filters = Record<(typeof FIELDS)[number], string>;
const NO_FILTERS: Filters = { type: '', appname: '', username: '', since: '', until: '' };

/** A datetime-local value (local time, no zone) as an instant; what does not parse goes as typed, for the API to name. */
function instant(local: string): string {
  if (!local) return '';
  const date = new Date(local);
  return Number.isNaN(date.getTime()) ? local : date.toISOString();
}

/** An instant as a datetime-local value in this browser's zone; what does not parse is shown as it is. */
function local(iso: string): string {
  const date = new Date(iso);
  if (!iso || Number.isNaN(date.getTime())) return iso;
  const shifted = new Date(date.getTime() - date.getTimezoneOffset() * 60_000).toISOString();
  return shifted.slice(0, date.getSeconds() || date.getMilliseconds() ? 19 : 16);
}

const listEvents = async (f: Filters, before: number | undefined) => {
  const query = queryString({ limit: PAGE_SIZE, before, type: f.type, appname: f.appname.trim(), username: f.username.trim(), since: f.since, until: f.until });
  return (await call<{ data: AuditEvent[] }>('GET', `/api/v1/audit-events${query}`)).data;
};

/** The audit trail, newest first (admins only: the API refuses others, and the console shows no link). Filters live in the URL. */
export function AuditPage() {
  const [filters, setFilters] = useQueryState(FIELDS);
  const [opened, setOpened] = useState<number>();
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

  const set = (name: keyof Filters, convert: (value: string) => string = (v) => v) => (event: { currentTarget: { value: string } }) =>
    setFilters({ ...filters, [name]: convert(event.currentTarget.value) });
  const filtered = FIELDS.some((name) => filters[name] !== '');

  const input = (name: 'appname' | 'username' | 'since' | 'until', label: string) => (
    <Field label={label} error={fieldErrors[name]}>
      {({ id, describedBy }) =>
        name === 'since' || name === 'until' ? (
          <input id={id} type="datetime-local" aria-describedby={describedBy} aria-invalid={fieldErrors[name] ? true : undefined} value={local(filters[name])} onInput={set(name, instant)} />
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
      }
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
                <EventRows key={event.id} event={event} open={opened === event.id} onToggle={() => setOpened(opened === event.id ? undefined : event.id)} />
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

const none = <span class="muted">—</span>;

/** An event's row, whose time opens the row beneath it with everything the API tells of the event. */
function EventRows(props: { event: AuditEvent; open: boolean; onToggle: () => void }) {
  const { event } = props;
  const detailsId = `event-${event.id}-details`;
  return (
    <>
      <tr class={props.open ? 'event-open' : undefined}>
        <th scope="row" class="nowrap time">
          <button type="button" class="disclosure" aria-expanded={props.open} aria-controls={detailsId} onClick={props.onToggle}>
            {localDateTime(event.occurred_at)}
          </button>
        </th>
        <td data-label="Type">
          <span class="event-type">{event.type}</span>
        </td>
        <td class="mono" data-label="Actor">{event.actor}</td>
        <td class="mono" data-label="Appname">{event.appname ?? none}</td>
        <td class="mono" data-label="Username">{event.username ?? none}</td>
        <td class="mono" data-label="Client address">{event.client_address ?? none}</td>
      </tr>
      {props.open && (
        <tr id={detailsId} class="event-details">
          <td colSpan={6}>
            <EventDetails event={event} />
          </td>
        </tr>
      )}
    </>
  );
}

/** A detail's value as text: strings as they are, anything else as JSON. */
const shown = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value));

function EventDetails(props: { event: AuditEvent }) {
  const { event } = props;
  const facts: [string, unknown][] = [
    ['Event id', event.id],
    ['Time (UTC)', event.occurred_at],
    ['Request id', event.request_id],
    ...Object.entries(event.details).map(([name, value]): [string, unknown] => [name, value]),
  ];
  return (
    <div role="group" aria-label={`Details of event ${event.id}`}>
      <dl class="facts">
        {facts.map(([name, value]) => (
          <div class="fact">
            <dt>{name}</dt>
            <dd class="mono">{value === null || value === undefined ? none : shown(value)}</dd>
          </div>
        ))}
      </dl>
    </div>
  );
}
