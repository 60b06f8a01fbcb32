import { type FixtureSite, startFixtureSite } from '@webutil/scripts/fixture-site';
import { SmtpUnderTest } from '@webutil/scripts/mail-under-test';
import { type MongoUnderTest, startMongo } from '@webutil/scripts/mongo-under-test';
import { type OwnNats, startOwnNats } from '@webutil/scripts/nats-under-test';
import { startTestStack, type TestStack } from '@webutil/scripts/test-stack';
import { expect } from 'chai';

/** Accounts bursting at once, each its cycle's credits, and calls per burst (past the credits). */
const ACCOUNTS = 4;
const CREDITS = 40;
const CALLS = 60;

/**
 * Issue 39's credit notices in the multi-replica topology (two edges, two billing, NATS, jongodb,
 * mail over SMTP to a server in this process): a burst of calls crossing 80 % and 100 % of the
 * cycle, settled through both billing replicas, mails each notice at most once per cycle (the
 * claim in the mail store, decision 0424), and the 100 % one exactly once.
 */
describe('credit notices in a cluster (two edges, two billing, jongodb, SMTP)', function () {
  this.timeout(300_000);
  let nats: OwnNats;
  let mongo: MongoUnderTest;
  let smtp: SmtpUnderTest;
  let site: FixtureSite;
  let stack: TestStack;

  before(async () => {
    [nats, mongo, smtp, site] = await Promise.all([
      startOwnNats(),
      startMongo(),
      SmtpUnderTest.start(),
      startFixtureSite(),
    ]);
    stack = await startTestStack({
      allowTargets: '127.0.0.0/8',
      env: { NATS_URL: nats.url, MONGO_URL: mongo.url, SMTP_URL: smtp.url, PUBLIC_BASE_URL: 'https://webutil.example' },
      replicas: { billing: 2 },
      edges: 2,
    });
    process.stdout.write(`      store: ${mongo.label}\n`);
  });
  after(async () => {
    await stack?.stop();
    await Promise.all([site?.close(), smtp?.close(), nats?.dispose(), mongo?.stop()]);
  });

  /** A Starter account of CREDITS a cycle, its rate limit out of the way, and a live key. */
  async function funded(i: number): Promise<{ email: string; apiKey: string }> {
    const email = `notices-${i}-${process.pid}-${Date.now()}@example.test`;
    const created = await stack.admin(
      ...['create-account', '--email', email, '--plan', 'STARTER', '--credits', String(CREDITS)],
      ...['--rate-limit', '1000000', '--mint-key', `burst-${i}`],
    );
    return { email, apiKey: String(created.apiKey) };
  }

  /** CALLS down-checks of one key at once, alternating between the edges: statuses by count. */
  async function burst(apiKey: string): Promise<Record<string, number>> {
    const counts: Record<string, number> = {};
    await Promise.all(
      Array.from({ length: CALLS }, async (_, i) => {
        const url = `${stack.edgeUrls[i % 2]}/v1/down-check?url=${encodeURIComponent(site.url(`/ok?i=${i}`))}`;
        const res = await fetch(url, { headers: { authorization: `Bearer ${apiKey}` } });
        await res.arrayBuffer();
        counts[res.status] = (counts[res.status] ?? 0) + 1;
      }),
    );
    return counts;
  }

  const mails = (email: string, subject: string) =>
    smtp.received.filter((m) => m.to.includes(email) && m.subject.includes(subject));

  it('a burst past 80% and 100% on both billing replicas mails each notice once per cycle', async () => {
    const accounts = await Promise.all(Array.from({ length: ACCOUNTS }, (_, i) => funded(i)));
    const bursts = await Promise.all(accounts.map(({ apiKey }) => burst(apiKey)));
    for (const counts of bursts) {
      // Exactly the cycle's credits were spent; the rest were refused for want of credits.
      expect(counts['200'], JSON.stringify(counts)).to.equal(CREDITS);
      expect(counts['402'], JSON.stringify(counts)).to.equal(CALLS - CREDITS);
    }
    for (const { email } of accounts) await smtp.waitFor(email, (m) => m.subject.includes('all of this cycle'));
    // A second burst, all refused, and time for any late check of either replica.
    await Promise.all(accounts.map(({ apiKey }) => burst(apiKey)));
    await new Promise((resolve) => setTimeout(resolve, 3000));
    for (const { email } of accounts) {
      expect(mails(email, 'all of this cycle'), email).to.have.length(1);
      // Crossed within the burst: the 80% notice is claimed once, or folded into the 100% mail.
      expect(mails(email, '80%').length, email).to.be.at.most(1);
    }
    process.stdout.write(
      `      80% mails: ${accounts.filter(({ email }) => mails(email, '80%').length).length} of ${ACCOUNTS}\n`,
    );
  });
});
