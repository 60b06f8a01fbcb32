import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { type CrawlSite, startCrawlSite } from '@webutil/scripts/fixture-crawl-site';
import { type FixtureSite, startFixtureSite } from '@webutil/scripts/fixture-site';
import { type MongoUnderTest, startMongo } from '@webutil/scripts/mongo-under-test';
import { type OwnNats, startOwnNats } from '@webutil/scripts/nats-under-test';
import { fundedKey } from '@webutil/scripts/test-accounts';
import { startTestStack, type TestStack } from '@webutil/scripts/test-stack';
import { expect } from 'chai';
import { eventually, quota } from '../billing-helpers.js';
import { crawlEnds } from '../crawl-helpers.js';

/** Calls per burst, and the credits the burst's account has (a down-check costs 1). */
const CALLS = 200;
const CREDITS = 100;
/** Calls a client keeps in flight. */
const IN_FLIGHT = 16;
/** Billing's hold grace here, and its expiry sweep's period. */
const GRACE_MS = 3_000;
const SWEEP_MS = 500;
/**
 * The longest any hold a dead edge left lives: a lease's (the edges' default CALLER_VIEW_MS of 1 s
 * plus 60 s for its last call) plus the grace, and two sweeps.
 */
const LONGEST_HOLD_MS = 1_000 + 60_000 + GRACE_MS + 2 * SWEEP_MS;

/**
 * Issue 29, item 6: the multi-replica topology on one machine — two edges, two billing, two crawl
 * replicas, the other services once, a private NATS JetStream and jongodb (MONGO_URL) as the
 * cluster's store — with replicas SIGKILLed under load, and the ledger compared with what the
 * clients observed. `npm run test:cluster` (run by .ci/run after `npm test`).
 */
describe('failover in a cluster (two edges, two billing, two crawl, NATS, jongodb)', function () {
  this.timeout(600_000);
  let nats: OwnNats;
  let mongo: MongoUnderTest;
  let stack: TestStack;
  let site: FixtureSite;
  let slow: CrawlSite;

  before(async () => {
    [nats, mongo, site, slow] = await Promise.all([
      startOwnNats(),
      startMongo(),
      startFixtureSite(),
      startCrawlSite({ pages: 120, latencyMs: 100, silentHost: false, rateLimited: false }),
    ]);
    stack = await startTestStack({
      allowTargets: '127.0.0.0/8',
      env: { NATS_URL: nats.url, MONGO_URL: mongo.url },
      // Holds nobody settles come back within seconds, so the test can read the final ledger.
      envFor: {
        billing: { RESERVATION_GRACE_MS: String(GRACE_MS), RESERVATION_SWEEP_MS: String(SWEEP_MS) },
        edge: { WEBHOOK_POLL_MS: '200', WEBHOOK_TICK_MS: '100' },
      },
      replicas: { billing: 2, crawl: 2 },
      edges: 2,
    });
    process.stdout.write(`      store: ${mongo.label}\n`);
  });
  after(async () => {
    await stack?.stop();
    await Promise.all([site?.close(), slow?.close(), nats?.dispose(), mongo?.stop()]);
  });

  /** A fresh Starter account holding CREDITS credits, and its key. */
  const freshKey = (name: string) => fundedKey(stack, name, CREDITS);

  /**
   * CALLS paid down-checks over both edges, IN_FLIGHT at a time; `fault` runs once after `faultAt`
   * answers. What the clients observed: statuses by count.
   */
  const burst = async (apiKey: string, faultAt: number, fault: () => Promise<void>) => {
    const statuses: number[] = [];
    let next = 0;
    let faulted: Promise<void> | undefined;
    const client = async () => {
      while (next < CALLS) {
        const i = next++;
        const edge = i % 2;
        const status = await fetch(`${stack.edgeUrls[edge]}/v1/down-check?url=${site.url(`/ok?i=${i}`)}`, {
          headers: { authorization: `Bearer ${apiKey}` },
        }).then(
          async (res) => {
            await res.arrayBuffer();
            return res.status;
          },
          () => 0, // no answer (the edge died with the call)
        );
        statuses.push(status);
        if (statuses.length === faultAt) faulted = fault();
      }
    };
    await Promise.all(Array.from({ length: IN_FLIGHT }, client));
    await faulted;
    const counts: Record<string, number> = {};
    for (const s of statuses) counts[s] = (counts[s] ?? 0) + 1;
    return { successes: counts['200'] ?? 0, unanswered: counts['0'] ?? 0, counts };
  };

  it('a billing replica SIGKILLed under load: spent equals the successes, at once, never more', async () => {
    const apiKey = await freshKey('billing-kill');
    const { successes, counts } = await burst(apiKey, 40, () => stack.kill('billing'));
    process.stdout.write(`      billing killed: ${JSON.stringify(counts)}\n`);
    expect(successes).to.be.at.most(CREDITS);
    // Well before any hold could expire (30 s + grace): a hold billing took and never answered
    // was found by the retry or released by its name.
    await eventually(async () => {
      expect((await quota(stack, { apiKey, edge: 1 })).remaining).to.equal(CREDITS - successes);
    }, 20_000);
    await stack.start('billing');
  });

  it('an edge SIGKILLed under load: every answered success is spent, and at most the calls cut too', async () => {
    const apiKey = await freshKey('edge-kill');
    let killedAt = 0;
    // The key is busy: each edge pays its first calls from holds of their own, the rest from leases.
    const { successes, unanswered, counts } = await burst(apiKey, 40, async () => {
      killedAt = Date.now();
      await stack.kill('edge-2');
    });
    expect(successes).to.be.at.most(CREDITS);
    // Every hold the dead edge left (its calls' own, its leases') has expired by then and returned
    // what it did not spend; the live edge's leases have ended and settled.
    await new Promise((r) => setTimeout(r, Math.max(0, killedAt + LONGEST_HOLD_MS - Date.now())));
    const spent = CREDITS - (await quota(stack, { apiKey })).remaining;
    process.stdout.write(
      `      edge killed: ${JSON.stringify(counts)}; spent ${spent}; ` +
        `uncharged successes: ${Math.max(0, successes - spent)}\n`,
    );
    // Settled before answering (decision 0255): no success a client got is free...
    expect(spent, 'spent ≥ answered successes').to.be.at.least(successes);
    // ...and a call charged without a success is one whose connection was cut after its work was done.
    expect(spent, 'spent ≤ successes + calls that got no answer').to.be.at.most(successes + unanswered);
    await stack.start('edge-2');
  });

  it('a crawl replica SIGKILLed mid-crawl: another resumes it, it ends done once, charged once', async () => {
    const apiKey = await freshKey('crawl-kill');
    const res = await fetch(`${stack.edgeUrl}/v1/link-extract/crawl`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url: slow.entryUrl }),
    });
    expect(res.status).to.equal(202);
    const { jobId } = ((await res.json()) as { data: { jobId: string } }).data;
    const startedOn = await eventually(async () => {
      const line = stack.logs.find((l) => l.includes(jobId) && l.includes('crawl started'));
      expect(line).to.be.a('string');
      return (line as string).startsWith('[crawl-2]') ? 'crawl-2' : 'crawl';
    }, 30_000);
    const killedAt = Date.now();
    await stack.kill(startedOn);
    await eventually(async () => {
      const resumed = stack.logs.find(
        (l) => l.includes(jobId) && l.includes('crawl started') && !l.startsWith(`[${startedOn}]`),
      );
      expect(resumed).to.be.a('string');
    }, 30_000);
    process.stdout.write(`      crawl resumed ${Date.now() - killedAt} ms after the SIGKILL\n`);
    const job = await eventually(async () => {
      const poll = await fetch(`${stack.edgeUrls[1]}/v1/link-extract/crawl/${jobId}`, {
        headers: { authorization: `Bearer ${apiKey}` },
      });
      const { data } = (await poll.json()) as { data: { status: string } };
      expect(data.status).to.not.equal('crawling');
      return data;
    }, 120_000);
    expect(job.status).to.equal('done');
    expect(await crawlEnds(stack, jobId)).to.have.length(1);
    expect((await quota(stack, { apiKey })).remaining).to.equal(CREDITS - 1);
  });

  it('webhooks over both edges: a silent receiver holds 4 at once; others arrive on time, one id each', async () => {
    const hits: string[] = [];
    /** Each path's webhook-ids: a delivery sent again (at-least-once, decision 0206) keeps its id. */
    const ids = new Map<string, Set<string>>();
    /** The silent receiver's deliveries open at this moment (a sender gives up after 10 s), and the most at once. */
    const hanging = new Set<string>();
    let mostHanging = 0;
    const receiver = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        hits.push(req.url ?? '/');
        const id = String(req.headers['webhook-id'] ?? '');
        ids.set(req.url ?? '/', (ids.get(req.url ?? '/') ?? new Set()).add(id));
        if (!req.url?.startsWith('/hang')) return void res.writeHead(204).end();
        // /hang never answers.
        hanging.add(id);
        mostHanging = Math.max(mostHanging, hanging.size);
        res.on('close', () => hanging.delete(id));
      });
    });
    receiver.listen(0, '127.0.0.1');
    await once(receiver, 'listening');
    const hook = (path: string) => `http://127.0.0.1:${(receiver.address() as AddressInfo).port}${path}`;
    const call = async (edge: number, apiKey: string, path: string, body: unknown) => {
      const res = await fetch(`${stack.edgeUrls[edge]}/v1${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      await res.arrayBuffer();
      return res.status;
    };
    const crawlWithHook = (edge: number, apiKey: string, path: string) =>
      call(edge, apiKey, '/link-extract/crawl', { url: site.url('/ok'), webhookUrl: hook(path) });
    try {
      const [slowKey, onTimeKey] = await Promise.all([freshKey('hooks-slow'), freshKey('hooks-on-time')]);
      expect(await call(0, slowKey, '/webhooks/secret', {})).to.equal(201);
      expect(await call(1, onTimeKey, '/webhooks/secret', {})).to.equal(201);
      for (let i = 0; i < 8; i++) expect(await crawlWithHook(i % 2, slowKey, `/hang-${i}`)).to.equal(202);
      await eventually(async () => expect(hanging.size).to.equal(4), 60_000);
      for (let i = 0; i < 3; i++) {
        const started = Date.now();
        expect(await crawlWithHook(i % 2, onTimeKey, `/on-time-${i}`)).to.equal(202);
        await eventually(async () => expect(hits).to.include(`/on-time-${i}`), 60_000);
        expect(Date.now() - started, `delivery ${i}`).to.be.below(7_000);
      }
      // Each job's event is one delivery: one webhook-id, whichever edge sent it. Delivery is
      // at-least-once (decision 0206): a claim lost to the other edge may send it again, same id.
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      // Both edges together worked on at most 4 of the account's deliveries at once (billing's leases say so).
      expect(mostHanging, "most of the silent receiver's deliveries open at once").to.equal(4);
      const onTime = hits.filter((path) => path.startsWith('/on-time'));
      process.stdout.write(`      on-time deliveries received: ${onTime.length} for 3 events\n`);
      for (let i = 0; i < 3; i++) expect(ids.get(`/on-time-${i}`)?.size, `/on-time-${i}`).to.equal(1);
      expect(ids.get('/on-time-0')?.values().next().value).to.be.a('string').and.not.equal('');
    } finally {
      receiver.closeAllConnections();
      receiver.close();
    }
  });
});
