import { expect } from 'chai';
import {
  RESPONSE_TIME_POINTS,
  STATUS_INCIDENTS,
  STATUS_SLUG,
  type StatusMonitorInput,
  statusPageView,
} from '../src/status-page.js';
import { dailyBars, uptimeWindows } from '../src/uptime.js';

const NOW = Date.parse('2026-11-29T12:00:00Z');
const HOUR_MS = 3_600_000;

/** A monitor checked hourly for 10 days, down every `downEvery`-th hour, with one incident a day. */
function monitor(id: string, status: string, downEvery: number): StatusMonitorInput {
  const runs = Array.from({ length: 240 }, (_, i) => ({
    startedAt: new Date(NOW - i * HOUR_MS).toISOString(),
    verdict: i % downEvery === 0 ? 'down' : 'up',
    responseTimeMs: 200,
  }));
  // A monitor down now has its latest incident still open, opened half an hour ago.
  const incidents = Array.from({ length: 15 }, (_, day) => {
    const open = day === 0 && status === 'down';
    return {
      id: `${id}-inc-${day}`,
      state: open ? 'open' : 'closed',
      openedAt: new Date(NOW - day * 24 * HOUR_MS - (open ? HOUR_MS / 2 : HOUR_MS)).toISOString(),
      closedAt: open ? undefined : new Date(NOW - day * 24 * HOUR_MS).toISOString(),
      durationSeconds: 3600,
      reason: 'HTTP 503',
    };
  });
  return { id, name: `Site ${id}`, kind: 'down-check', status, runs, incidents };
}

describe('statusPageView', () => {
  it('shows each chosen monitor’s uptime windows, 90 daily bars and a 24 h response-time chart', () => {
    const input = [monitor('a', 'up', 7), monitor('b', 'down', 3)];
    const view = statusPageView({ slug: 'acme', title: 'Acme status' }, input, NOW);
    expect(view.overall).to.equal('partial-outage');
    for (const [i, shown] of view.monitors.entries()) {
      expect(shown.uptime).to.deep.equal(uptimeWindows(input[i]!.runs, NOW));
      expect(shown.days).to.deep.equal(dailyBars(input[i]!.runs, NOW, 90));
      expect(shown.responseTimes).to.have.length(RESPONSE_TIME_POINTS);
      expect(shown).to.not.have.property('runs');
    }
  });

  it('lists the newest incidents of every monitor, at most twenty, with the monitor’s name', () => {
    const view = statusPageView({ slug: 'acme', title: 'Acme' }, [monitor('a', 'up', 7), monitor('b', 'down', 3)], NOW);
    expect(view.incidents).to.have.length(STATUS_INCIDENTS);
    const opened = view.incidents.map((incident) => Date.parse(incident.openedAt));
    expect(opened).to.deep.equal([...opened].sort((x, y) => y - x));
    expect(view.incidents[0]).to.include({ state: 'open', monitorName: 'Site b' });
  });

  it('overall: operational when nothing is down, major outage when all are, unknown before any run', () => {
    const page = { slug: 'acme', title: 'Acme' };
    expect(statusPageView(page, [monitor('a', 'up', 7), monitor('c', 'ok', 7)], NOW).overall).to.equal('operational');
    expect(statusPageView(page, [monitor('a', 'down', 7), monitor('c', 'failed', 7)], NOW).overall).to.equal(
      'major-outage',
    );
    expect(statusPageView(page, [{ ...monitor('a', 'unknown', 7), runs: [] }], NOW).overall).to.equal('unknown');
  });
});

describe('STATUS_SLUG', () => {
  for (const slug of ['acme', 'acme-status', 'a1b', 'x'.repeat(40)])
    it(`accepts ${slug}`, () => expect(STATUS_SLUG.test(slug)).to.equal(true));
  for (const slug of ['ab', '-acme', 'acme-', 'Acme', 'ac me', 'x'.repeat(41), '../x'])
    it(`refuses ${slug}`, () => expect(STATUS_SLUG.test(slug)).to.equal(false));
});
