import { expect } from 'chai';
import { dailyBars, responseTimeSeries, UPTIME_WINDOWS, type UptimeRun, uptimeWindows } from '../src/uptime.js';

const HOUR_MS = 3_600_000;
const NOW = Date.parse('2026-11-29T12:30:00Z');

/**
 * A history of hourly checks over 100 days before NOW: every 13th hour down, every 29th hour
 * skipped (no verdict); response time 100 ms plus the hour of day.
 */
const history: UptimeRun[] = Array.from({ length: 100 * 24 }, (_, i) => {
  const at = NOW - i * HOUR_MS;
  if (i % 29 === 0) return { startedAt: new Date(at).toISOString() };
  const verdict = i % 13 === 0 ? 'down' : 'up';
  return { startedAt: new Date(at).toISOString(), verdict, responseTimeMs: 100 + new Date(at).getUTCHours() };
});

/** The figure a window should show, counted from the history's own definition. */
function expected(spanMs: number) {
  const checks = history.filter((run) => run.verdict && Date.parse(run.startedAt) > NOW - spanMs - 1);
  const failures = checks.filter((run) => run.verdict === 'down').length;
  return {
    checks: checks.length,
    failures,
    percent: Math.floor(((checks.length - failures) / checks.length) * 10_000) / 100,
  };
}

describe('uptimeWindows', () => {
  it('counts the share of checks up over 24 h, 7 d, 30 d and 90 d, skipping runs without a verdict', () => {
    const windows = uptimeWindows(history, NOW);
    expect(windows.map((w) => w.window)).to.deep.equal(Object.keys(UPTIME_WINDOWS));
    for (const [name, span] of Object.entries(UPTIME_WINDOWS)) {
      expect(windows.find((w) => w.window === name)).to.deep.equal({ window: name, ...expected(span) });
    }
    expect(windows.at(-1)!.percent).to.be.lessThan(100);
  });

  it('never rounds a failure up to 100 %, and has no figure without checks', () => {
    const runs = Array.from({ length: 20_000 }, (_, i) => ({
      startedAt: new Date(NOW - i * 1000).toISOString(),
      verdict: i === 5 ? 'down' : 'up',
    }));
    expect(uptimeWindows(runs, NOW)[0]).to.include({ window: '24h', percent: 99.99 });
    expect(uptimeWindows([], NOW)[1]).to.deep.equal({ window: '7d', percent: null, checks: 0, failures: 0 });
  });
});

describe('dailyBars', () => {
  it('one bar per UTC day, oldest first, today last', () => {
    const bars = dailyBars(history, NOW, 30);
    expect(bars).to.have.length(30);
    expect(bars.at(-1)!.day).to.equal('2026-11-29');
    expect(bars[0]!.day).to.equal('2026-10-31');
    const day = '2026-11-20';
    const ofDay = history.filter((run) => run.verdict && run.startedAt.startsWith(day));
    expect(bars.find((bar) => bar.day === day)).to.include({
      checks: ofDay.length,
      failures: ofDay.filter((run) => run.verdict === 'down').length,
    });
    // Today's bar holds the hours up to NOW only.
    expect(bars.at(-1)!.checks).to.equal(
      history.filter((run) => run.verdict && run.startedAt.startsWith('2026-11-29')).length,
    );
  });
});

describe('responseTimeSeries', () => {
  it('averages the answered checks of each bucket', () => {
    const from = NOW - 24 * HOUR_MS;
    const points = responseTimeSeries(history, from, NOW, 24);
    expect(points).to.have.length(24);
    for (const [i, point] of points.entries()) {
      const inBucket = history.filter((run) => {
        const at = Date.parse(run.startedAt);
        return at >= from + i * HOUR_MS && at < from + (i + 1) * HOUR_MS && run.verdict === 'up';
      });
      const times = inBucket.map((run) => run.responseTimeMs!);
      expect(point.meanMs).to.equal(times.length ? Math.round(times.reduce((a, b) => a + b, 0) / times.length) : null);
      expect(point.maxMs).to.equal(times.length ? Math.max(...times) : null);
    }
    expect(points.some((point) => point.meanMs === null)).to.equal(true);
  });
});
