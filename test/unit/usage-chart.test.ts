import { chartModel, lastDays, niceStep, totalsOf, windowStart, type UsageInterval } from '../../console/src/usage-chart';

/**
 * The console's usage chart as a model (console/src/usage-chart.ts): the route lists only days with
 * use, oldest first; the chart has 30 UTC days ending today, zeros included, stacked in four kinds.
 * Drawn in a browser by test/e2e/key-page.test.ts.
 */
const DAY = 86_400;
const NOW = Date.UTC(2026, 10, 28, 15, 30) / 1000; // 28 Nov 2026, 15:30 UTC
const TODAY = Date.UTC(2026, 10, 28) / 1000;
const formats = { day: (s: number) => new Date(s * 1000).toISOString().slice(5, 10), count: (n: number) => String(n) };

const series: UsageInterval[] = [
  { start: TODAY - 40 * DAY, tokens: 99, verifications: { VALID: 99 }, refused: {} }, // before the window
  { start: TODAY - 29 * DAY, tokens: 2, verifications: { VALID: 10, RATE_LIMITED: 1 }, refused: {} },
  { start: TODAY - 3 * DAY, tokens: 0, verifications: { INSUFFICIENT_PERMISSIONS: 2, NOT_FOUND: 1 }, refused: { expired: 1, usage_exceeded: 3 } },
  { start: TODAY, tokens: 5, verifications: { VALID: 20 }, refused: { rate_limited: 1 } },
];

describe('the usage chart model', () => {
  it('when the route lists three days of the window, then there are 30 days, oldest first, the others zero, in four kinds', () => {
    const days = lastDays(series, NOW);

    expect(windowStart(NOW)).toBe(TODAY - 29 * DAY);
    expect(days).toHaveLength(30);
    expect(days[0]).toEqual({ start: TODAY - 29 * DAY, counts: { valid: 10, tokens: 2, limited: 1, refused: 0 }, total: 13 });
    expect(days[26]).toEqual({ start: TODAY - 3 * DAY, counts: { valid: 0, tokens: 0, limited: 3, refused: 4 }, total: 7 });
    expect(days[29]).toEqual({ start: TODAY, counts: { valid: 20, tokens: 5, limited: 1, refused: 0 }, total: 26 });
    expect(days.filter((d) => d.total === 0)).toHaveLength(27);
  });

  it('when totalled, then each code and reason of the window is counted on its own, and the day before the window is not', () => {
    const totals = totalsOf(series, NOW);

    expect(totals.tokens).toBe(7);
    expect(totals.verifications).toMatchObject({ VALID: 30, RATE_LIMITED: 1, INSUFFICIENT_PERMISSIONS: 2, NOT_FOUND: 1, DISABLED: 0 });
    expect(totals.refused).toMatchObject({ expired: 1, usage_exceeded: 3, rate_limited: 1, disabled: 0 });
  });

  it('when drawn 720 px wide, then the bars stack bottom up from the axis, the y axis rounds up to a step, and today is labelled', () => {
    const model = chartModel(lastDays(series, NOW), 720, 200, formats);
    const today = model.bars[29]!;

    expect(model.yTicks.map((t) => t.label)).toEqual(['0', '10', '20', '30']);
    expect(today.segments.map((s) => s.key)).toEqual(['valid', 'tokens', 'limited']);
    expect(today.segments[0]!.y + today.segments[0]!.height).toBeCloseTo(model.plot.bottom);
    expect(today.segments.reduce((h, s) => h + s.height, 0)).toBeCloseTo(((model.plot.bottom - model.plot.top) * 26) / 30);
    expect(model.bars[1]!.segments).toEqual([]);
    expect(today.title).toBe('11-28: Verified (VALID): 20, Tokens issued: 5, Refused: rate or usage limit: 1, Refused: other reasons: 0');
    expect(model.xTicks.at(-1)).toMatchObject({ label: '11-28', anchor: 'middle' });
    expect(model.xTicks.every((t) => t.x > 0 && t.x < 720)).toBe(true);
    expect(model.any).toBe(true);
  });

  it('when drawn 320 px wide, then fewer dates are labelled, none overlapping, every one inside the chart', () => {
    const wide = chartModel(lastDays(series, NOW), 720, 200, formats);
    const narrow = chartModel(lastDays(series, NOW), 320, 200, formats);
    const width = (label: string) => label.length * 7 + 6;

    expect(narrow.xTicks.length).toBeLessThan(wide.xTicks.length);
    narrow.xTicks.forEach((t, n) => {
      expect(t.x - width(t.label) / 2).toBeGreaterThanOrEqual(0);
      expect(t.x + width(t.label) / 2).toBeLessThanOrEqual(320);
      if (n > 0) expect(t.x - narrow.xTicks[n - 1]!.x).toBeGreaterThanOrEqual(width(t.label));
    });
  });

  it('when nothing was used, then the model says so (the page shows "No use in the last 30 days")', () => {
    expect(chartModel(lastDays([], NOW), 720, 200, formats).any).toBe(false);
  });

  it('steps are 1, 2 or 5 times a power of ten, never below 1', () => {
    expect([0, 3, 9, 26, 130, 4_449, 1_234_567].map((max) => niceStep(max))).toEqual([1, 1, 5, 10, 50, 2_000, 500_000]);
  });
});
