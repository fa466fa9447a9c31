import { useEffect, useId, useLayoutEffect, useMemo, useRef, useState } from 'preact/hooks';
import { SessionEnded, describe, queryString } from './api';
import { call } from './session';
import {
  REFUSALS,
  SERIES,
  USAGE_DAYS,
  VERIFY_CODES,
  chartModel,
  defaultFormats,
  lastDays,
  totalsOf,
  windowStart,
  type DayUse,
  type SeriesKey,
  type UsageInterval,
} from './usage-chart';

const CHART_HEIGHT = 200;

type Loaded = { intervals: UsageInterval[]; now: number } | { error: string } | undefined;

/**
 * A key's use over the last 30 UTC days (GET /api/v1/api-keys/{appname}/usage): a stacked bar a day,
 * drawn here as SVG (no library, nothing from another host), its legend, and its numbers as a table.
 */
export function UsageSection(props: { appname: string }) {
  const { appname } = props;
  const [loaded, setLoaded] = useState<Loaded>();
  const [attempt, setAttempt] = useState(0);

  useEffect(() => {
    let current = true;
    setLoaded(undefined);
    const now = Date.now() / 1000;
    const path = `/api/v1/api-keys/${encodeURIComponent(appname)}/usage${queryString({ interval: 'day', since: windowStart(now) })}`;
    call<{ data: UsageInterval[] }>('GET', path)
      .then((answer) => current && setLoaded({ intervals: answer.data, now }))
      .catch((err: unknown) => {
        if (current && !(err instanceof SessionEnded)) setLoaded({ error: describe(err) });
      });
    return () => {
      current = false;
    };
  }, [appname, attempt]);

  return (
    <section class="panel usage" aria-labelledby="usage-title">
      <div class="usage-head">
        <h2 id="usage-title">Usage</h2>
        <span class="muted">Last {USAGE_DAYS} days, by UTC day</span>
        <button type="button" class="button button-small" onClick={() => setAttempt((n) => n + 1)} disabled={!loaded}>
          Refresh
        </button>
      </div>
      {!loaded && (
        <p class="table-state" aria-busy="true">
          Loading usage…
        </p>
      )}
      {loaded && 'error' in loaded && (
        <p class="banner banner-error" role="alert">
          {loaded.error}
        </p>
      )}
      {loaded && 'intervals' in loaded && <UsageChart appname={appname} intervals={loaded.intervals} now={loaded.now} />}
    </section>
  );
}

const WORDS: Record<string, string> = {
  disabled: 'disabled',
  expired: 'expired',
  address_not_allowed: 'address not allowed',
  rate_limited: 'rate limit reached',
  usage_exceeded: 'usage limit reached',
};

function UsageChart(props: { appname: string; intervals: UsageInterval[]; now: number }) {
  const days = useMemo(() => lastDays(props.intervals, props.now), [props.intervals, props.now]);
  const totals = useMemo(() => totalsOf(props.intervals, props.now), [props.intervals, props.now]);
  const byKind = Object.fromEntries(SERIES.map(({ key }) => [key, days.reduce((n, d) => n + d.counts[key], 0)])) as Record<SeriesKey, number>;
  const any = days.some((d) => d.total > 0);
  if (!any) return <p class="usage-empty">No use in the last {USAGE_DAYS} days.</p>;

  const formats = defaultFormats();
  const summary = `${SERIES.map(({ key, label }) => `${label}: ${formats.count(byKind[key])}`).join('; ')}. Busiest day: ${busiest(days, formats.day)}.`;
  const rows: [string, number][] = [
    ['Tokens issued', totals.tokens],
    ...VERIFY_CODES.map((code): [string, number] => [`Verifications: ${code}`, totals.verifications[code]]),
    ...REFUSALS.map((reason): [string, number] => [`Token requests refused: ${WORDS[reason]}`, totals.refused[reason]]),
  ];
  return (
    <>
      <ul class="legend">
        {SERIES.map(({ key, label }) => (
          <li key={key}>
            <span class={`swatch series-${key}`} aria-hidden="true" />
            {label} <strong>{formats.count(byKind[key])}</strong>
          </li>
        ))}
      </ul>
      <Bars appname={props.appname} days={days} summary={summary} />
      <table class="table usage-totals">
        <caption>Totals over the last {USAGE_DAYS} days</caption>
        <tbody>
          {rows
            .filter(([label, n]) => n > 0 || label === 'Tokens issued' || label === 'Verifications: VALID')
            .map(([label, n]) => (
              <tr key={label}>
                <th scope="row">{label}</th>
                <td class="number">{n.toLocaleString()}</td>
              </tr>
            ))}
        </tbody>
      </table>
    </>
  );
}

function busiest(days: DayUse[], day: (start: number) => string): string {
  const top = days.reduce((a, b) => (b.total > a.total ? b : a));
  return `${day(top.start)}, ${top.total.toLocaleString()} in all`;
}

/** The SVG, drawn at the width its box has (a ResizeObserver follows it), so its type keeps its size on a phone. */
function Bars(props: { appname: string; days: DayUse[]; summary: string }) {
  const box = useRef<HTMLDivElement>(null);
  const [width, setWidth] = useState(0);
  const titleId = useId();
  const descId = useId();

  useLayoutEffect(() => {
    const element = box.current;
    if (!element) return;
    setWidth(element.clientWidth);
    const observer = new ResizeObserver(() => setWidth(element.clientWidth));
    observer.observe(element);
    return () => observer.disconnect();
  }, []);

  const model = width > 0 ? chartModel(props.days, width, CHART_HEIGHT) : undefined;
  return (
    <div class="usage-chart" ref={box}>
      {model && (
        <svg width={model.width} height={model.height} viewBox={`0 0 ${model.width} ${model.height}`} role="img" aria-labelledby={`${titleId} ${descId}`}>
          <title id={titleId}>{`Use of ${props.appname} per day over the last ${USAGE_DAYS} days`}</title>
          <desc id={descId}>{props.summary}</desc>
          {model.yTicks.map((tick) => (
            <g key={tick.value}>
              <line class="grid" x1={model.plot.left} x2={model.plot.right} y1={tick.y} y2={tick.y} />
              <text class="axis-label anchor-end" x={model.plot.left - 6} y={tick.y + 4}>
                {tick.label}
              </text>
            </g>
          ))}
          {model.bars.map((bar) => (
            <g key={bar.day.start} class="day">
              <title>{bar.title}</title>
              {/* The whole slot answers the hover, also on a day with no use. */}
              <rect class="hover" x={bar.x} y={model.plot.top} width={bar.width} height={model.plot.bottom - model.plot.top} />
              {bar.segments.map((segment) => (
                <rect key={segment.key} class={`series-${segment.key}`} x={bar.x} y={segment.y} width={bar.width} height={segment.height} />
              ))}
            </g>
          ))}
          <line class="axis" x1={model.plot.left} x2={model.plot.right} y1={model.plot.bottom} y2={model.plot.bottom} />
          {model.xTicks.map((tick) => (
            <text key={tick.label} class={`axis-label anchor-${tick.anchor}`} x={tick.x} y={model.plot.bottom + 16}>
              {tick.label}
            </text>
          ))}
        </svg>
      )}
    </div>
  );
}
