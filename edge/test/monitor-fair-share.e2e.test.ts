import { type FixtureSite, startFixtureSite } from '@webutil/scripts/fixture-site';
import { fundedKey } from '@webutil/scripts/test-accounts';
import { startTestStack, type TestStack } from '@webutil/scripts/test-stack';
import { expect } from 'chai';
import { json } from './billing-helpers.js';

/** A minute passes in a second in the monitor service (MONITOR_TIME_SCALE). */
const TIME_SCALE = 60;
const INTERVAL_MS = 60_000 / TIME_SCALE;
const TICK_MS = 100;
/** Runs in flight on the one monitor replica. */
const CONCURRENCY = 2;
/** How long each of the flood's checks takes (the fixture's slow page). */
const SLOW_MS = 1_000;
/** The flood: one-minute monitors of one account, far more than the replica's slots can run. */
const FLOOD = 80;
/**
 * Liveness, 10x normal: a run waits at most for the next slot that frees, i.e. one slow check, plus a
 * tick. Without the fair share the quiet monitor waits behind the flood's backlog (~FLOOD / CONCURRENCY
 * slow checks: 40 s here).
 */
const BOUND_MS = 10 * (SLOW_MS + TICK_MS);
/** How long the quiet monitor is watched once the flood is running. */
const WATCH_MS = 25_000;

interface Run {
  slot: string;
  startedAt: string;
  late: boolean;
  outcome: string;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const post = (body: unknown) => ({
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(body),
});

/**
 * Issue 40, fair scheduling (docs/decisions/0484): one account on the highest plan floods the monitor
 * replica with one-minute monitors of a slow page, another account has one monitor. The replica's run
 * slots are handed out max-min fairly across accounts, so the second account's runs start within a
 * bound of their due time while the flood's wait.
 */
describe('monitors: run slots shared fairly across accounts', function () {
  this.timeout(180_000);
  let stack: TestStack;
  let site: FixtureSite;

  before(async () => {
    site = await startFixtureSite();
    stack = await startTestStack({
      allowTargets: '127.0.0.0/8',
      envFor: {
        monitor: {
          MONITOR_TIME_SCALE: String(TIME_SCALE),
          MONITOR_TICK_MS: String(TICK_MS),
          MONITOR_CONCURRENCY: String(CONCURRENCY),
          MONITOR_GRACE_MS: String(INTERVAL_MS / 2),
        },
      },
    });
  });
  after(async () => {
    await stack?.stop();
    await site?.close();
  });

  const create = async (apiKey: string, name: string, url: string) => {
    const res = await stack.api('/v1/monitors', {
      apiKey,
      ...post({ name, kind: 'down-check', input: { url }, intervalSeconds: 60 }),
    });
    const body = await json(res);
    expect(res.status, JSON.stringify(body)).to.equal(201);
    return body.data as { id: string; nextRunAt: string };
  };
  const runsOf = async (apiKey: string, id: string): Promise<Run[]> => {
    const body = await json(await stack.api(`/v1/monitors/${id}/runs?limit=500`, { apiKey }));
    return (body.data.runs as Run[]).slice().reverse();
  };

  it(
    'starts the quiet account’s runs within the bound of their ' + 'due time while a flood of slow ones waits',
    async () => {
      const flood: string[] = [];
      for (let i = 0; i < FLOOD; i += 10) {
        const made = await Promise.all(
          Array.from({ length: 10 }, (_, k) =>
            create(stack.apiKey, `flood ${i + k}`, site.url(`/slow?ms=${SLOW_MS}&m=${i + k}`)),
          ),
        );
        flood.push(...made.map((m) => m.id));
      }
      // The flood's backlog builds: each of its monitors is due every second, the replica runs two a second.
      await sleep(5_000);
      const quietKey = await fundedKey(stack, 'quiet', 1_000);
      const quiet = await create(quietKey, 'quiet', site.url('/'));
      const watchedFrom = Date.now();
      await sleep(WATCH_MS);
      const watchedTo = Date.now();

      // When each run was due: the first at the monitor's first slot, each later one a minute after the
      // slot its previous run claimed (slots missed meanwhile make it late, and longer to come).
      const runs = await runsOf(quietKey, quiet.id);
      const waits: number[] = [];
      let due = Date.parse(quiet.nextRunAt);
      for (const run of runs) {
        waits.push(Date.parse(run.startedAt) - due);
        due = Date.parse(run.slot) + INTERVAL_MS;
      }
      // The run due last and not started yet has waited too.
      if (due < watchedTo) waits.push(watchedTo - due);
      const floodRuns = (await Promise.all(flood.slice(0, 10).map((id) => runsOf(stack.apiKey, id)))).flat();
      const summary =
        `quiet: ${runs.length} runs in ${watchedTo - watchedFrom} ms, waits ${waits.join(', ')} ms; ` +
        `flood (10 of ${FLOOD}): ${floodRuns.length} runs, ${floodRuns.filter((r) => r.late).length} late`;
      process.stdout.write(`      ${summary}\n`);
      // The flood is held back (its runs come late, slots missed): the replica was full throughout.
      expect(floodRuns.filter((r) => r.late).length, summary).to.be.greaterThan(floodRuns.length / 2);
      // The quiet monitor ran all along, each run within the bound of its due time.
      expect(runs.length, summary).to.be.at.least(WATCH_MS / BOUND_MS);
      expect(Math.max(...waits), summary).to.be.at.most(BOUND_MS);
    },
  );
});
