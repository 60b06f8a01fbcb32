import { status } from '@grpc/grpc-js';
import { type CallContext, createLogger, ServiceError } from '@webutil/kit';
import Database from 'better-sqlite3';
import { expect } from 'chai';
import { badgeSvg } from '../src/badges.js';
import { SqliteStatusPageStore } from '../src/status-pages/store-sqlite.js';
import { type MonitorReads, type MonitorSummary, monitorStatusService } from '../src/status-server.js';
import type { UptimeRun } from '../src/uptime.js';

const NOW = Date.parse('2026-11-29T12:00:00Z');
const HOUR_MS = 3_600_000;
const log = createLogger('monitor-test', 'silent');
const ctx = {
  requestId: 'r',
  log,
  signal: new AbortController().signal,
  deadline: Number.POSITIVE_INFINITY,
} as CallContext;

/** Two accounts' monitors: A's down-check (hourly, every 10th check down), A's ssl-scan, B's down-check. */
const monitors: Record<string, { subject: string; summary: MonitorSummary; runs: UptimeRun[]; result?: unknown }> = {
  up: {
    subject: 'account:a',
    summary: { id: 'up', name: 'Shop', kind: 'down-check', status: 'up' },
    runs: Array.from({ length: 24 * 10 }, (_, i) => ({
      startedAt: new Date(NOW - i * HOUR_MS).toISOString(),
      verdict: i % 10 === 0 ? 'down' : 'up',
      responseTimeMs: 120,
    })),
  },
  cert: {
    subject: 'account:a',
    summary: { id: 'cert', name: 'Certificate', kind: 'ssl-scan', status: 'ok' },
    runs: [],
    result: { daysUntilExpiry: 12 },
  },
  other: { subject: 'account:b', summary: { id: 'other', name: 'B', kind: 'down-check', status: 'up' }, runs: [] },
};

/** The core store's reads, over the fixture above. */
const reads: MonitorReads = {
  monitor: async (subject, id) => (monitors[id]?.subject === subject ? monitors[id]?.summary : undefined),
  // Every run of the 90 days one by one, no day's counts: as valid a history as the store's split.
  history: async (id, at) => ({
    runs: (monitors[id]?.runs ?? []).filter(
      (r) => Date.parse(r.startedAt) >= at - 90 * 86_400_000 && Date.parse(r.startedAt) <= at,
    ),
    days: [],
  }),
  incidents: async () => [],
  latestResult: async (id) => monitors[id]?.result,
};

const ownerA = { subject: 'account:a', sandbox: false, plan: 'FREE' };
const ownerB = { subject: 'account:b', sandbox: false, plan: 'FREE' };

async function failure(promise: Promise<unknown>): Promise<ServiceError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).to.be.instanceOf(ServiceError);
  return err as ServiceError;
}

describe('monitorStatusService', () => {
  let rpc: Record<string, (request: any, ctx: CallContext) => Promise<any>>;
  beforeEach(() => {
    const pages = new SqliteStatusPageStore(new Database(':memory:'));
    rpc = monitorStatusService({ reads, pages, now: () => NOW }, log).handlers as typeof rpc;
  });

  it('a monitor’s summary is its owner’s alone', async () => {
    const { monitor } = await rpc.getMonitorSummary!({ owner: ownerA, id: 'up' }, ctx);
    const day = monitor.uptime.find((f: any) => f.window === '24h');
    const last24 = monitors.up!.runs.filter((r) => Date.parse(r.startedAt) >= NOW - 24 * HOUR_MS);
    expect(day.checks).to.equal(last24.length);
    expect(day.failures).to.equal(last24.filter((r) => r.verdict === 'down').length);
    expect(monitor.days).to.have.length(90);
    expect((await failure(rpc.getMonitorSummary!({ owner: ownerB, id: 'up' }, ctx))).code).to.equal(status.NOT_FOUND);
  });

  it('a status page shows only the owner’s chosen monitors once enabled; its slug is the owner’s', async () => {
    const refused = await failure(
      rpc.putStatusPage!(
        { owner: ownerA, slug: 'acme', title: 'Acme', monitorIds: ['up', 'other'], enabled: true },
        ctx,
      ),
    );
    expect(refused).to.include({ code: status.INVALID_ARGUMENT, reason: 'UNKNOWN_MONITOR' });
    expect((await failure(rpc.getStatusPage!({ slug: 'acme' }, ctx))).code).to.equal(status.NOT_FOUND);

    await rpc.putStatusPage!(
      { owner: ownerA, slug: 'acme', title: 'Acme', monitorIds: ['up', 'cert'], enabled: false },
      ctx,
    );
    expect((await failure(rpc.getStatusPage!({ slug: 'acme' }, ctx))).code).to.equal(status.NOT_FOUND);
    await rpc.putStatusPage!(
      { owner: ownerA, slug: 'acme', title: 'Acme', monitorIds: ['up', 'cert'], enabled: true },
      ctx,
    );
    const page = await rpc.getStatusPage!({ slug: 'acme' }, ctx);
    expect(page.monitors.map((m: any) => m.name)).to.deep.equal(['Shop', 'Certificate']);
    expect(JSON.stringify(page)).to.not.include('account:a');

    const taken = await failure(
      rpc.putStatusPage!({ owner: ownerB, slug: 'acme', title: 'B', monitorIds: [], enabled: true }, ctx),
    );
    expect(taken).to.include({ code: status.ALREADY_EXISTS, reason: 'SLUG_TAKEN' });
    const bad = await failure(
      rpc.putStatusPage!({ owner: ownerB, slug: 'A!', title: 'B', monitorIds: [], enabled: true }, ctx),
    );
    expect(bad.reason).to.equal('INVALID_SLUG');
  });

  it('badges: only for monitors on an enabled page, each figure from its monitor', async () => {
    expect(
      (await failure(rpc.getBadge!({ monitorId: 'up', figure: 'uptime', window: '7d', style: '' }, ctx))).code,
    ).to.equal(status.NOT_FOUND);
    await rpc.putStatusPage!(
      { owner: ownerA, slug: 'acme', title: 'Acme', monitorIds: ['up', 'cert'], enabled: true },
      ctx,
    );
    const week = monitors.up!.runs.filter((r) => Date.parse(r.startedAt) >= NOW - 7 * 24 * HOUR_MS);
    const percent =
      Math.floor(((week.length - week.filter((r) => r.verdict === 'down').length) / week.length) * 10_000) / 100;
    const uptime = await rpc.getBadge!({ monitorId: 'up', figure: 'uptime', window: '7d', style: '' }, ctx);
    expect(uptime.svg).to.equal(badgeSvg({ kind: 'uptime', window: '7d', percent }));
    const ssl = await rpc.getBadge!({ monitorId: 'cert', figure: 'ssl', window: '', style: 'flat-square' }, ctx);
    expect(ssl.svg).to.equal(badgeSvg({ kind: 'ssl', daysUntilExpiry: 12 }, 'flat-square'));
    const wrong = await failure(rpc.getBadge!({ monitorId: 'up', figure: 'ssl', window: '', style: '' }, ctx));
    expect(wrong.reason).to.equal('BADGE_NOT_FOR_KIND');
    expect(
      (await failure(rpc.getBadge!({ monitorId: 'up', figure: 'uptime', window: '2d', style: '' }, ctx))).reason,
    ).to.equal('INVALID_WINDOW');
  });
});
