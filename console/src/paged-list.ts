import { useEffect, useRef, useState, type StateUpdater, type Dispatch } from 'preact/hooks';
import { ApiError, SessionEnded, describe } from './api';

export interface PagedListOptions<T, Q, Cursor> {
  /** What the list shows: the first page is loaded again whenever it changes. */
  query: Q;
  pageSize: number;
  /** One page for `query`, after (keys) or before (events) `cursor`; the first page without one. */
  fetchPage: (query: Q, cursor: Cursor | undefined) => Promise<T[]>;
  /** The cursor of the page after the one ending with `last`. */
  cursorOf: (last: T) => Cursor;
  /** The query's fields: a 400 naming one is shown beside it, and the list is empty. */
  fields: readonly string[];
  /** How long to wait after the query changes, so that typing sends one request, not one per key. */
  debounceMs: (query: Q) => number;
}

export interface PagedList<T> {
  items: T[];
  /** For a change made here (an edit, a delete) that should show without a reload. */
  setItems: Dispatch<StateUpdater<T[]>>;
  state: 'loading' | 'ready' | 'error';
  /** A failure's words: the whole list's when state is 'error', else a failed "Load more"'s. */
  error: string | undefined;
  fieldErrors: Partial<Record<string, string>>;
  hasMore: boolean;
  loadingMore: boolean;
  reload: () => void;
  loadMore: () => void;
}

/**
 * A list the API serves in pages, as the keys and audit pages show it. Answers to any request but the
 * latest are dropped, so a slow answer for an old filter never replaces a newer one; a session that
 * ended is left to the app, which is back at sign-in.
 */
export function usePagedList<T, Q, Cursor>({ query, pageSize, fetchPage, cursorOf, fields, debounceMs }: PagedListOptions<T, Q, Cursor>): PagedList<T> {
  const [items, setItems] = useState<T[]>([]);
  const [state, setState] = useState<PagedList<T>['state']>('loading');
  const [error, setError] = useState<string>();
  const [fieldErrors, setFieldErrors] = useState<Partial<Record<string, string>>>({});
  const [hasMore, setHasMore] = useState(false);
  const [loadingMore, setLoadingMore] = useState(false);
  const latest = useRef(0);

  /** The first page (replacing the list), or the page after `cursor`. */
  const load = async (q: Q, cursor?: Cursor) => {
    const request = ++latest.current;
    const more = cursor !== undefined;
    if (more) setLoadingMore(true);
    else setState('loading');
    try {
      const page = await fetchPage(q, cursor);
      if (request !== latest.current) return;
      setItems((current) => (more ? [...current, ...page] : page));
      setHasMore(page.length === pageSize);
      setFieldErrors({});
      setError(undefined);
      setState('ready');
    } catch (err) {
      if (request !== latest.current || err instanceof SessionEnded) return;
      const field = err instanceof ApiError && err.status === 400 ? fields.find((name) => name === err.field) : undefined;
      if (field && err instanceof ApiError) {
        setFieldErrors({ [field]: err.message });
        setItems([]);
        setHasMore(false);
        setState('ready');
      } else {
        setError(describe(err));
        if (!more) setState('error');
      }
    } finally {
      if (request === latest.current) setLoadingMore(false);
    }
  };

  useEffect(() => {
    const timer = setTimeout(() => void load(query), debounceMs(query));
    return () => clearTimeout(timer);
  }, [query]);

  const last = items[items.length - 1];
  return {
    items,
    setItems,
    state,
    error,
    fieldErrors,
    hasMore,
    loadingMore,
    reload: () => void load(query),
    // Offered only after a full page, so there is always a last item to continue from.
    loadMore: () => void (last !== undefined && load(query, cursorOf(last))),
  };
}
