import { type FixtureSite, startFixtureSite } from '@webutil/scripts/fixture-site';
import { freePort } from '@webutil/scripts/local-stack';
import { type MongoUnderTest, startMongo } from '@webutil/scripts/mongo-under-test';
import { startTestStack, type TestStack } from '@webutil/scripts/test-stack';
import { expect } from 'chai';
import { json } from '../billing-helpers.js';

/** One-minute down-check monitors, on one account. */
const MONITORS = 200;
/** Monitor replicas: `monitor`, `monitor-2`, `monitor-3`. */
const REPLICAS = ['monitor', 'monitor-2', 'monitor-3'];
/** Time runs this many times faster in the monitor service (MONITOR_TIME_SCALE): a minute is 6 s. */
const TIME_SCALE = 10;
const MINUTE_MS = 60_000 / TIME_SCALE;
/** A claim's run still `running` this long after it started lost its replica. */
const STALE_RUN_MS = 5_000;

interface Run {
  slot: string;
  startedAt: string;
  late: boolean;
  outcome: string;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const sum = (counts: number[]) => counts.reduce((a, b) => a + b, 0);

/**
 * Issue 40's scheduling in the multi-replica topology (docs/decisions/0469): three monitor replicas on
 * the Mongo store (jongodb) with the chart's settings, 200 one-minute down-check monitors made through
 * the REST edge, at a time scale of 10. The replica that has claimed the most is SIGKILLed mid-minute; later
 * every replica is down for three minutes and one comes back. Per monitor and slot there is exactly one
 * run; a slot missed is followed by one run marked late, never a replay of the missed ones. The
 * scheduler does not use NATS (a claim is a unique insert in the store), so NATS is not restarted here.
 */
describe('monitors in a cluster (three monitor replicas, jongodb): one run per slot', function () {
  this.timeout(900_000);
  let mongo: MongoUnderTest;
  let site: FixtureSite;
  let stack: TestStack;
  const metricsPorts: Record<string, number> = {};

  before(async () => {
    [mongo, site] = await Promise.all([startMongo(), startFixtureSite()]);
    for (const name of REPLICAS) metricsPorts[name] = await freePort();
    const schedulerEnv = {
      MONITOR_TIME_SCALE: String(TIME_SCALE),
      MONITOR_TICK_MS: '100',
      MONITOR_GRACE_MS: String(MINUTE_MS / 3),
      MONITOR_STALE_RUN_MS: String(STALE_RUN_MS),
    };
    stack = await startTestStack({
      allowTargets: '127.0.0.0/8',
      env: { MONGO_URL: mongo.url },
      // `monitor`'s entry is every replica's; each replica's own adds its metrics port.
      envFor: Object.fromEntries(
        REPLICAS.map((name, i) => [
          name,
          { ...(i === 0 ? schedulerEnv : {}), METRICS_PORT: String(metricsPorts[name]) },
        ]),
      ),
      replicas: { monitor: REPLICAS.length },
    });
    process.stdout.write(`      store: ${mongo.label}\n`);
  });
  after(async () => {
    await stack?.stop();
    await Promise.all([site?.close(), mongo?.stop()]);
  });

  /** Slots a replica has claimed since it started, from its Prometheus counter. */
  const claimsOf = async (name: string): Promise<number> => {
    const text = await (await fetch(`http://127.0.0.1:${metricsPorts[name]}/metrics`)).text();
    const lines = text.split('\n').filter((line) => line.startsWith('webutil_monitor_runs_claimed_total{'));
    return lines.reduce((sum, line) => sum + Number(line.split(' ').pop()), 0);
  };

  const create = async (i: number): Promise<string> => {
    const res = await stack.api('/v1/monitors', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        name: `site ${i}`,
        kind: 'down-check',
        input: { url: site.url(`/?monitor=${i}`) },
        intervalSeconds: 60,
      }),
    });
    const body = await json(res);
    expect(res.status, JSON.stringify(body)).to.equal(201);
    return String(body.data.id);
  };

  const runsOf = async (id: string): Promise<Run[]> => {
    const res = await stack.api(`/v1/monitors/${id}/runs?limit=500`);
    const body = await json(res);
    expect(res.status, JSON.stringify(body)).to.equal(200);
    expect(body.data.nextPageToken).to.equal(null);
    return (body.data.runs as Run[]).slice().reverse();
  };

  it('runs each monitor once per slot through a SIGKILL and an outage, with one late run after it', async () => {
    const ids: string[] = [];
    // Five creates at a time: ten at once outlasted the edge's 10 s call bound once on jongodb (which
    // answers one request at a time) late in a full cluster run; the runs are what is tested here.
    for (let i = 0; i < MONITORS; i += 5) {
      ids.push(...(await Promise.all(Array.from({ length: Math.min(5, MONITORS - i) }, (_, k) => create(i + k)))));
    }
    // Every monitor's first slot has come and gone, then one more minute with all replicas.
    await sleep(2 * MINUTE_MS);

    const claims = await Promise.all(REPLICAS.map(claimsOf));
    expect(
      claims.every((n) => n > 0),
      `claims by replica: ${claims}`,
    ).to.equal(true);
    const busiest = REPLICAS[claims.indexOf(Math.max(...claims))] as string;
    // Mid-minute for the monitors whose slots fall in the second half of it (slots are spread over it).
    await sleep(MINUTE_MS / 2);
    await stack.kill(busiest);
    const survivors = REPLICAS.filter((name) => name !== busiest);
    const before = await Promise.all(survivors.map(claimsOf));
    // The survivors go on claiming: more than a run per monitor. At least three minutes; on jongodb a run
    // takes seconds under load and each replica holds 50, so a loaded machine may take longer (runs late,
    // not absent): bounded at ten times that.
    await sleep(3 * MINUTE_MS);
    let after = await Promise.all(survivors.map(claimsOf));
    const claimedAfterKill = () => sum(after) - sum(before);
    for (const bound = Date.now() + 27 * MINUTE_MS; claimedAfterKill() <= MONITORS && Date.now() < bound; ) {
      await sleep(MINUTE_MS / 6);
      after = await Promise.all(survivors.map(claimsOf));
    }
    expect(claimedAfterKill(), `claims ${claims}, then ${before} -> ${after}`).to.be.greaterThan(MONITORS);

    // Every replica down for three minutes, then one back.
    await Promise.all(survivors.map((name) => stack.kill(name)));
    const allDown = Date.now();
    await sleep(3 * MINUTE_MS);
    const restarting = Date.now();
    const restarted = survivors[0] as string;
    await stack.start(restarted);
    // Two minutes more, and the stale sweep's time for the dead replicas' claims; then, until the restarted
    // replica has claimed once per monitor (the most overdue first, so each of them once), bounded as above.
    await sleep(Math.max(2 * MINUTE_MS, STALE_RUN_MS + STALE_RUN_MS / 2));
    for (const bound = Date.now() + 18 * MINUTE_MS; (await claimsOf(restarted)) < MONITORS && Date.now() < bound; ) {
      await sleep(MINUTE_MS / 6);
    }

    const outcomes = new Map<string, number>();
    let otherGaps = 0;
    let stuck = 0;
    // Read ten monitors' runs at a time (each read waits on the store behind the running replica's calls).
    const runsById = new Map<string, Run[]>();
    for (let i = 0; i < ids.length; i += 10) {
      const batch = ids.slice(i, i + 10);
      const read = await Promise.all(batch.map(async (id) => [id, await runsOf(id)] as const));
      for (const [id, runs] of read) runsById.set(id, runs);
    }
    for (const id of ids) {
      const runs = runsById.get(id) as Run[];
      const slots = runs.map((run) => Date.parse(run.slot));
      expect(new Set(slots).size, `${id}: two runs of one slot`).to.equal(slots.length);
      for (const run of runs) outcomes.set(run.outcome, (outcomes.get(run.outcome) ?? 0) + 1);
      stuck += runs.filter((run) => run.outcome === 'running' && Date.parse(run.startedAt) < allDown).length;
      let acrossOutage = 0;
      for (let i = 1; i < runs.length; i++) {
        const run = runs[i] as Run;
        const minutes = ((slots[i] as number) - (slots[i - 1] as number)) / MINUTE_MS;
        // Slots sit on the monitor's grid: a whole number of minutes apart.
        expect(Number.isInteger(minutes) && minutes >= 1, `${id}: slots ${minutes} minutes apart`).to.equal(true);
        if (minutes === 1) continue;
        // Slots were missed: the run that follows stands in for them, once, marked late.
        expect(run.late, `${id}: the run after ${minutes - 1} missed slots is not marked late`).to.equal(true);
        const spansOutage = (slots[i - 1] as number) < allDown && (slots[i] as number) > restarting - MINUTE_MS;
        if (spansOutage) acrossOutage++;
        else otherGaps++;
      }
      // No replay of the outage's slots: a slot that began while every replica was down was never run.
      const replayed = slots.filter((slot) => slot > allDown && slot < restarting - MINUTE_MS);
      expect(replayed, `${id}: outage slots run`).to.deep.equal([]);
      expect(acrossOutage, `${id}: catch-up runs after the outage`).to.equal(1);
      const afterRestart = runs.filter((run) => Date.parse(run.startedAt) >= restarting);
      expect(afterRestart.length, `${id}: runs after the restart`).to.be.at.least(1);
      expect(afterRestart[0]?.late, `${id}: the first run after the outage`).to.equal(true);
    }
    // What the dead replicas had claimed and not finished is closed by the sweep, not left running.
    expect(stuck, `outcomes: ${JSON.stringify([...outcomes])}`).to.equal(0);
    process.stdout.write(
      `      runs by outcome: ${JSON.stringify(Object.fromEntries(outcomes))}; ` +
        `slots missed outside the outage (each followed by a late run): ${otherGaps}\n`,
    );
  });
});
