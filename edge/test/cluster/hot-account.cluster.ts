import { type FixtureSite, startFixtureSite } from '@webutil/scripts/fixture-site';
import { type MongoUnderTest, startMongo } from '@webutil/scripts/mongo-under-test';
import { type OwnNats, startOwnNats } from '@webutil/scripts/nats-under-test';
import { fundedKey } from '@webutil/scripts/test-accounts';
import { startTestStack, type TestStack } from '@webutil/scripts/test-stack';
import { expect } from 'chai';
import { eventually, quota } from '../billing-helpers.js';

/** Calls per burst, all sent at once, and the credits of the burst's key (a link check costs 2). */
const CALLS = 200;
const CREDITS = 100;
const PRICE = 2;
const ROUNDS = 5;
/** What a busy account may be answered while every component is up. */
const ANSWERS = ['200', '402', '429'];

/**
 * Issue 35, hot accounts: one key's calls all at once over two edges, each reaching both billing
 * replicas (as the chart wires them), on the Mongo store (jongodb). Every call is answered as the
 * account's state says (200, 402, 429), never 503, and the ledger is exact.
 */
describe('a hot account in a cluster (two edges, two billing, jongodb)', function () {
  this.timeout(900_000);
  let nats: OwnNats;
  let mongo: MongoUnderTest;
  let stack: TestStack;
  let site: FixtureSite;

  before(async () => {
    [nats, mongo, site] = await Promise.all([startOwnNats(), startMongo(), startFixtureSite()]);
    stack = await startTestStack({
      allowTargets: '127.0.0.0/8',
      env: { NATS_URL: nats.url, MONGO_URL: mongo.url },
      replicas: { billing: 2 },
      edges: 2,
    });
    process.stdout.write(`      store: ${mongo.label}\n`);
  });
  after(async () => {
    await stack?.stop();
    await Promise.all([site?.close(), nats?.dispose(), mongo?.stop()]);
  });

  /** A fresh Starter account holding CREDITS credits, and its key. */
  const freshKey = (name: string) => fundedKey(stack, name, CREDITS);

  /**
   * CALLS link checks of one key sent at once, alternating between the edges; `fault` runs once
   * `faultAt` have been answered. Statuses by count, and how many were unanswered when it ran.
   */
  const burst = async (apiKey: string, faultAt = 0, fault?: () => Promise<void>) => {
    const counts: Record<string, number> = {};
    const codes: Record<string, number> = {};
    let answered = 0;
    let inFlightAtFault = 0;
    let faulted: Promise<void> | undefined;
    await Promise.all(
      Array.from({ length: CALLS }, async (_, i) => {
        const status = await fetch(`${stack.edgeUrls[i % 2]}/v1/broken-links`, {
          method: 'POST',
          headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
          body: JSON.stringify({ url: site.url(`/ok?i=${i}`) }),
          signal: AbortSignal.timeout(120_000),
        }).then(
          async (res) => {
            const body = (await res.json().catch(() => undefined)) as { error?: { code?: string } } | undefined;
            if (res.status !== 200) {
              const code = `${res.status} ${body?.error?.code ?? '?'}`;
              codes[code] = (codes[code] ?? 0) + 1;
            }
            return String(res.status);
          },
          () => 'none',
        );
        counts[status] = (counts[status] ?? 0) + 1;
        answered++;
        if (fault && answered === faultAt) {
          inFlightAtFault = CALLS - answered;
          faulted = fault();
        }
      }),
    );
    await faulted;
    return { successes: counts['200'] ?? 0, counts, codes, inFlightAtFault };
  };

  /** Credits spent by the key: what billing holds for it counts, so holds still open show. */
  const spentBy = async (apiKey: string) => CREDITS - (await quota(stack, { apiKey })).remaining;

  /** The key's spend once the edges' views have caught up with `expected` (or the last read after 15 s). */
  const settledSpend = async (apiKey: string, expected: number) => {
    let spent = await spentBy(apiKey);
    for (const until = Date.now() + 15_000; spent !== expected && Date.now() < until; ) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      spent = await spentBy(apiKey);
    }
    return spent;
  };

  const title = `${CALLS} calls at once on ${CREDITS} credits, ${ROUNDS} times: 200, 402 or 429, not 503; ledger exact`;
  it(title, async () => {
    const seen: string[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      const apiKey = await freshKey(`burst-${round}`);
      const { successes, counts, codes } = await burst(apiKey);
      // A balance read on one edge may trail settlements made through the other by its view's
      // refresh (decision 0351 saw the same): the ledger must come to the exact figure, never past it.
      const spent = await settledSpend(apiKey, successes * PRICE);
      seen.push(`round ${round}: ${JSON.stringify(counts)} ${JSON.stringify(codes)}; spent ${spent}`);
      process.stdout.write(`      ${seen.at(-1)}\n`);
      expect(
        Object.keys(counts).filter((status) => !ANSWERS.includes(status)),
        seen.join('\n'),
      ).to.deep.equal([]);
      expect(spent, 'spent = successes × price, 0 overspent').to.equal(successes * PRICE);
      expect(successes * PRICE).to.be.at.most(CREDITS);
      // Nothing refused while credits were left: every credit of the key paid for a success.
      expect(successes, seen.join('\n')).to.equal(CREDITS / PRICE);
    }
  });

  // Killed at the first answer, billing is taking the burst's holds; after 160, the 402s are out and
  // billing is settling the successes.
  for (const killAt of [1, 160]) {
    const title = `a billing replica SIGKILLed at answer ${killAt}: the live one answers; 503 only for calls in flight`;
    it(title, async () => {
      const apiKey = await freshKey(`billing-kill-${killAt}`);
      const logsFrom = stack.logs.length;
      const { successes, counts, codes, inFlightAtFault } = await burst(apiKey, killAt, () => stack.kill('billing-2'));
      // What the replica logged, it logged before it died: the burst's holds and settlements it served.
      const served = stack.logs.slice(logsFrom).filter((l) => /^\[billing-2\].*"rpc":"(Authorize|Settle)/.test(l));
      process.stdout.write(
        `      billing-2 killed after serving ${served.length} of the burst's billing calls, ` +
          `${inFlightAtFault} calls unanswered: ${JSON.stringify(counts)} ${JSON.stringify(codes)}\n`,
      );
      // Killed at the first answer, the dead replica was taking its share of the burst's holds; by
      // the 160th, the calls left may all be on the live one (logged above, not asserted).
      if (killAt === 1) expect(served.length).to.be.greaterThan(0);
      // Every call is answered; a 503 only for a call the dead replica held when it died.
      expect(counts.none ?? 0).to.equal(0);
      expect(Object.keys(counts).filter((s) => ![...ANSWERS, '503'].includes(s))).to.deep.equal([]);
      expect(counts['503'] ?? 0).to.be.at.most(inFlightAtFault);
      // A hold the dead replica granted and nobody settled is released by its name (or expires): the
      // balance comes to exactly what the successes cost.
      await eventually(async () => expect(await spentBy(apiKey)).to.equal(successes * PRICE), 120_000);
      // The live replica alone answers a whole burst.
      const next = await freshKey(`billing-kill-${killAt}-after`);
      const after = await burst(next);
      process.stdout.write(`      then, one replica: ${JSON.stringify(after.counts)}\n`);
      expect(after.counts['503'] ?? 0).to.equal(0);
      expect(await settledSpend(next, after.successes * PRICE)).to.equal(after.successes * PRICE);
      await stack.start('billing-2');
    });
  }
});
