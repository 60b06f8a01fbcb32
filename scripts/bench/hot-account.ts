/**
 * Issue 35, hot accounts, on the embedded store (one billing process, SQLite): 200 link checks
 * (2 credits each) of one Starter key sent at once through the edge, against 100 credits. Prints
 * each burst's answers by status (only 200, 402 and 429 are right; 50 successes, the rest 402),
 * what the key was charged against its successes, and the burst's time against the same 200 calls
 * of a key with credits to spare (every one a success), in the same run.
 */
import { startFixtureSite } from '../src/fixture-site.js';
import { startTestStack } from '../src/test-stack.js';
import { fmt } from './load.js';

const CALLS = 200;
const CREDITS = 100;
const PRICE = 2;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

const site = await startFixtureSite();
const stack = await startTestStack({ allowTargets: '127.0.0.0/8' });
let unique = 0;
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

async function newKey(credits: number): Promise<string> {
  const created = await stack.admin(
    'create-account',
    '--email',
    `bench-hot-${++unique}-${Date.now()}@example.test`,
    '--plan',
    'STARTER',
    '--credits',
    String(credits),
    '--rate-limit',
    '1000000',
    '--mint-key',
    'bench',
  );
  return created.apiKey as string;
}

/** CALLS link checks of one key at once: statuses by count, and the burst's wall time. */
async function burst(apiKey: string): Promise<{ counts: Record<string, number>; ms: number }> {
  const counts: Record<string, number> = {};
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CALLS }, async (_, i) => {
      const res = await stack.api('/v1/broken-links', {
        apiKey,
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ url: site.url(`/ok?hot=${++unique}-${i}`) }),
      });
      await res.arrayBuffer();
      counts[res.status] = (counts[res.status] ?? 0) + 1;
    }),
  );
  return { counts, ms: performance.now() - started };
}

try {
  await burst(await newKey(CALLS * PRICE)); // warm
  const hot: number[] = [];
  const spare: number[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    const apiKey = await newKey(CREDITS);
    const { counts, ms } = await burst(apiKey);
    hot.push(ms);
    const remaining = Number((await stack.api('/v1/quota', { apiKey })).headers.get('x-credits-remaining'));
    const successes = counts['200'] ?? 0;
    const wrong = Object.keys(counts).filter((status) => !['200', '402', '429'].includes(status));
    console.log(
      `hot account, round ${round}: ${JSON.stringify(counts)}   spent ${CREDITS - remaining} for ` +
        `${successes} successes x ${PRICE}: ${CREDITS - remaining === successes * PRICE ? 'exact' : 'NOT EXACT'}` +
        `${wrong.length > 0 ? `   WRONG ANSWERS: ${wrong.join(', ')}` : ''}   ${fmt(ms, 0)} ms`,
    );
    spare.push((await burst(await newKey(CALLS * PRICE))).ms);
  }
  console.log(
    `hot account burst p50 ${fmt(median(hot), 0)} ms   the same burst with credits to spare p50 ` +
      `${fmt(median(spare), 0)} ms   ratio ${fmt(median(hot) / median(spare), 2)}x`,
  );
} finally {
  await stack.stop();
  await site.close();
}
