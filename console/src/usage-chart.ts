// A key's use over the last 30 days as a chart model: plain numbers and words, no DOM, so the shape of
// the chart (days filled with zeros, what stacks where, the axes) is tested without a browser, and
// usage-section.tsx only draws it.

/** One interval of GET /api/v1/api-keys/{appname}/usage (contract, "Verifying keys, usage, leaks and imports"). */
export interface UsageInterval {
  /** Unix seconds at which the UTC day (or hour) starts. */
  start: number;
  tokens: number;
  verifications: Partial<Record<VerifyCode, number>>;
  refused: Partial<Record<Refusal, number>>;
}

export const VERIFY_CODES = ['VALID', 'NOT_FOUND', 'DISABLED', 'EXPIRED', 'ADDRESS_NOT_ALLOWED', 'INSUFFICIENT_PERMISSIONS', 'RATE_LIMITED', 'USAGE_EXCEEDED'] as const;
export type VerifyCode = (typeof VERIFY_CODES)[number];
export const REFUSALS = ['disabled', 'expired', 'address_not_allowed', 'rate_limited', 'usage_exceeded'] as const;
export type Refusal = (typeof REFUSALS)[number];

export const DAY_SECONDS = 86_400;
export const USAGE_DAYS = 30;

/**
 * What stacks in a day's bar, bottom first. Thirteen codes and reasons are more colours than an eye
 * (or a colour-blind one) tells apart, so they stack in four kinds: what worked (a valid verification,
 * a token issued) and the two ways a use is refused, by the key's limits or by anything else; the
 * table beneath the chart gives each code on its own.
 */
export const SERIES = [
  { key: 'valid', label: 'Verified (VALID)' },
  { key: 'tokens', label: 'Tokens issued' },
  { key: 'limited', label: 'Refused: rate or usage limit' },
  { key: 'refused', label: 'Refused: other reasons' },
] as const;
export type SeriesKey = (typeof SERIES)[number]['key'];

const LIMITED_CODES: readonly VerifyCode[] = ['RATE_LIMITED', 'USAGE_EXCEEDED'];
const LIMITED_REFUSALS: readonly Refusal[] = ['rate_limited', 'usage_exceeded'];

/** One UTC day of the window, zero when it had no use. */
export interface DayUse {
  start: number;
  counts: Record<SeriesKey, number>;
  total: number;
}

const sum = (values: (number | undefined)[]) => values.reduce<number>((a, b) => a + (b ?? 0), 0);

/** The four kinds of one interval. */
export function countsOf(i: Pick<UsageInterval, 'tokens' | 'verifications' | 'refused'>): Record<SeriesKey, number> {
  const v = i.verifications;
  const r = i.refused;
  return {
    valid: v.VALID ?? 0,
    tokens: i.tokens,
    limited: sum(LIMITED_CODES.map((c) => v[c])) + sum(LIMITED_REFUSALS.map((c) => r[c])),
    refused: sum(VERIFY_CODES.filter((c) => c !== 'VALID' && !LIMITED_CODES.includes(c)).map((c) => v[c])) + sum(REFUSALS.filter((c) => !LIMITED_REFUSALS.includes(c)).map((c) => r[c])),
  };
}

/** The start of the UTC day that holds `seconds`. */
export const utcDay = (seconds: number) => Math.floor(seconds / DAY_SECONDS) * DAY_SECONDS;

/** The `since` of the usage request: the first of the 30 UTC days that end with today. */
export const windowStart = (nowSeconds: number) => utcDay(nowSeconds) - (USAGE_DAYS - 1) * DAY_SECONDS;

/** The 30 UTC days that end with the one holding `nowSeconds`, oldest first, each with its use or zeros (the route lists only days that had use). */
export function lastDays(intervals: UsageInterval[], nowSeconds: number): DayUse[] {
  const first = windowStart(nowSeconds);
  const byDay = new Map(intervals.map((i) => [utcDay(i.start), i]));
  return Array.from({ length: USAGE_DAYS }, (_, n) => {
    const start = first + n * DAY_SECONDS;
    const interval = byDay.get(start);
    const counts = interval ? countsOf(interval) : { valid: 0, tokens: 0, limited: 0, refused: 0 };
    return { start, counts, total: sum(Object.values(counts)) };
  });
}

/** Totals of the window, per code and reason as the route gives them: the chart's table. */
export function totalsOf(intervals: UsageInterval[], nowSeconds: number) {
  const first = windowStart(nowSeconds);
  const inWindow = intervals.filter((i) => i.start >= first);
  return {
    tokens: sum(inWindow.map((i) => i.tokens)),
    verifications: Object.fromEntries(VERIFY_CODES.map((c) => [c, sum(inWindow.map((i) => i.verifications[c]))])) as Record<VerifyCode, number>,
    refused: Object.fromEntries(REFUSALS.map((c) => [c, sum(inWindow.map((i) => i.refused[c]))])) as Record<Refusal, number>,
  };
}

/** A round step (1, 2 or 5 times a power of ten, at least 1) that cuts `max` into about `parts` parts. */
export function niceStep(max: number, parts = 4): number {
  const raw = Math.max(1, max / parts);
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * power).find((s) => s >= raw) ?? 10 * power;
  return Math.max(1, Math.round(step));
}

export interface Segment {
  key: SeriesKey;
  y: number;
  height: number;
}
export interface Bar {
  day: DayUse;
  x: number;
  width: number;
  /** Bottom first; only kinds the day had. */
  segments: Segment[];
  /** Said on hover (the bar's <title>): the date and every kind, zeros too. */
  title: string;
}
export interface ChartModel {
  width: number;
  height: number;
  /** The plot's box inside the chart: the axes' labels sit outside it. */
  plot: { left: number; top: number; right: number; bottom: number };
  bars: Bar[];
  yTicks: { value: number; label: string; y: number }[];
  /** `anchor`: where the label's text sits on x (the last date ends at its bar, so it stays inside the chart). */
  xTicks: { label: string; x: number; anchor: 'start' | 'middle' | 'end' }[];
  /** False when the window had no use at all (the page says so instead of drawing empty axes). */
  any: boolean;
}

export interface Formats {
  day: (startSeconds: number) => string;
  count: (n: number) => string;
}

/** Dates as UTC days (the route's intervals are UTC days), counts in the browser's locale. */
export const defaultFormats = (): Formats => {
  const day = new Intl.DateTimeFormat(undefined, { month: 'short', day: 'numeric', timeZone: 'UTC' });
  const count = new Intl.NumberFormat(undefined, { notation: 'compact', maximumFractionDigits: 1 });
  const exact = new Intl.NumberFormat();
  return { day: (s) => day.format(new Date(s * 1000)), count: (n) => (n < 10_000 ? exact.format(n) : count.format(n)) };
};

/** Roughly how wide a label of `text` is at the chart's 12 px type. */
const labelWidth = (text: string) => text.length * 7 + 6;

/**
 * The chart for a box `width` by `height` CSS pixels: drawn at the size it is shown, so its type stays
 * 12 px on a phone, where fewer dates are labelled instead.
 */
export function chartModel(days: DayUse[], width: number, height: number, formats: Formats = defaultFormats()): ChartModel {
  const max = Math.max(0, ...days.map((d) => d.total));
  const step = niceStep(max);
  const top = Math.max(step, Math.ceil(max / step) * step);
  const yValues = Array.from({ length: Math.round(top / step) + 1 }, (_, n) => n * step);
  const left = Math.max(...yValues.map((v) => labelWidth(formats.count(v)))) + 6;
  // Room on the right for today's date centred under its bar, as the others are.
  const widest = Math.max(...days.map((d) => labelWidth(formats.day(d.start))));
  const roughSlot = (width - left) / Math.max(1, days.length);
  const plot = { left, top: 8, right: width - Math.max(8, Math.ceil(widest / 2 - roughSlot / 2) + 2), bottom: height - 24 };
  const plotHeight = plot.bottom - plot.top;
  const slot = (plot.right - plot.left) / Math.max(1, days.length);
  const barWidth = Math.max(2, slot * 0.72);
  const yOf = (value: number) => plot.bottom - (value / top) * plotHeight;

  const bars = days.map((day, n) => {
    let base = 0;
    const segments: Segment[] = [];
    for (const { key } of SERIES) {
      const value = day.counts[key];
      if (value === 0) continue;
      segments.push({ key, y: yOf(base + value), height: yOf(base) - yOf(base + value) });
      base += value;
    }
    const parts = SERIES.map(({ key, label }) => `${label}: ${formats.count(day.counts[key])}`).join(', ');
    return { day, x: plot.left + n * slot + (slot - barWidth) / 2, width: barWidth, segments, title: `${formats.day(day.start)}: ${parts}` };
  });

  // Labels every `every` days, counted back from today so the latest day always has its date.
  const every = [1, 2, 3, 5, 7, 10, 15, 30].find((k) => k * slot >= widest + 4) ?? days.length;
  const xTicks = days.flatMap((d, n): ChartModel['xTicks'] => {
    if ((days.length - 1 - n) % every !== 0) return [];
    const label = formats.day(d.start);
    const x = plot.left + (n + 0.5) * slot;
    const half = labelWidth(label) / 2;
    if (x + half > width) return [{ label, x: x + barWidth / 2, anchor: 'end' }];
    if (x - half < 0) return [{ label, x: x - barWidth / 2, anchor: 'start' }];
    return [{ label, x, anchor: 'middle' }];
  });

  return {
    width,
    height,
    plot,
    bars,
    yTicks: yValues.map((value) => ({ value, label: formats.count(value), y: yOf(value) })),
    xTicks,
    any: max > 0,
  };
}
