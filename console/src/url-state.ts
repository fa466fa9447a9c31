import { useEffect, useState } from 'preact/hooks';

/** The named parameters of the page's query string, "" for those it lacks. */
function read<K extends string>(names: readonly K[]): Record<K, string> {
  const params = new URLSearchParams(location.search);
  return Object.fromEntries(names.map((name) => [name, params.get(name) ?? ''])) as Record<K, string>;
}

/**
 * A page's filters kept in the URL's query string, so a reload or a shared link shows the same view.
 * Each change replaces the history entry rather than adding one: typing a filter is not navigation.
 * Back and forward (another entry's query) are read again.
 */
export function useQueryState<K extends string>(names: readonly K[]): [Record<K, string>, (next: Record<K, string>) => void] {
  const [values, setValues] = useState(() => read(names));
  useEffect(() => {
    const back = () => setValues(read(names));
    addEventListener('popstate', back);
    return () => removeEventListener('popstate', back);
  }, []);
  const update = (next: Record<K, string>) => {
    const params = new URLSearchParams(location.search);
    for (const name of names) {
      if (next[name]) params.set(name, next[name]);
      else params.delete(name);
    }
    const query = params.toString();
    history.replaceState(history.state, '', `${location.pathname}${query ? `?${query}` : ''}`);
    setValues(next);
  };
  return [values, update];
}
