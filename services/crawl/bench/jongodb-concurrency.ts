/**
 * How jongodb (the test suite's MongoDB-wire server) answers concurrent clients: `_id` lookups
 * per second and their median time with 1 to 128 lookups in flight, on a collection of 2,000 rows.
 * A distributed site audit's page workers on every replica are such clients (docs/operations.md,
 * "Distributed site audits on jongodb"). `npx tsx services/crawl/bench/jongodb-concurrency.ts`,
 * under the e2e lock; MONGO_URL measures another server instead.
 */
import { startMongo } from '@webutil/scripts/mongo-under-test';
import mongoose from 'mongoose';

const ROWS = 2_000;
const SECONDS = 4;

const mongo = await startMongo();
const connection = await mongoose.createConnection(mongo.url, { maxPoolSize: 200 }).asPromise();
try {
  const rows = connection.collection<{ _id: string; state: string }>(`concurrency_${process.pid}`);
  await rows.insertMany(Array.from({ length: ROWS }, (_, i) => ({ _id: `row ${i}`, state: 'queued' })));
  console.log(`${mongo.label}, ${ROWS} rows`);
  for (const clients of [1, 8, 32, 128]) {
    const times: number[] = [];
    const end = Date.now() + SECONDS * 1000;
    await Promise.all(
      Array.from({ length: clients }, async (_, client) => {
        for (let i = client; Date.now() < end; i += clients) {
          const start = performance.now();
          await rows.findOne({ _id: `row ${i % ROWS}` });
          times.push(performance.now() - start);
        }
      }),
    );
    times.sort((a, b) => a - b);
    const median = times[times.length >> 1] ?? 0;
    console.log(
      `${clients} in flight: ${Math.round(times.length / SECONDS)} lookups/s, median ${median.toFixed(1)} ms`,
    );
  }
  await rows.deleteMany({}); // jongodb has no `drop` command
} finally {
  await connection.close();
  await mongo.stop();
}
