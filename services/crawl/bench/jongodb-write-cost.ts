/**
 * What one write costs jongodb (the test suite's MongoDB-wire server) as its collection grows: the
 * median time of an `_id` update and of an insert into a collection of 2,500 to 20,000 rows, and of
 * a lookup by `_id` beside them. A distributed audit's frontier spreads its rows over collections
 * for it (docs/decisions/0498-frontier-by-id.md). `npx tsx services/crawl/bench/jongodb-write-cost.ts`,
 * under the e2e lock; MONGO_URL measures another server instead.
 */
import { startMongo } from '@webutil/scripts/mongo-under-test';
import mongoose from 'mongoose';

const SIZES = [2_500, 5_000, 10_000, 20_000];
const TRIES = 5;

const mongo = await startMongo();
const connection = await mongoose.createConnection(mongo.url).asPromise();
const median = (times: number[]) => (times.sort((a, b) => a - b)[Math.floor(times.length / 2)] as number).toFixed(1);
const timed = async (work: (i: number) => Promise<unknown>) => {
  const times: number[] = [];
  for (let i = 0; i < TRIES; i++) {
    const start = performance.now();
    await work(i);
    times.push(performance.now() - start);
  }
  return median(times);
};
try {
  console.log(`${mongo.label}: median ms of ${TRIES} calls`);
  for (const size of SIZES) {
    const rows = connection.collection<{ _id: string; state: string }>(`write_cost_${size}_${process.pid}`);
    for (let at = 0; at < size; at += 1_000)
      await rows.insertMany(Array.from({ length: 1_000 }, (_, i) => ({ _id: `row ${at + i}`, state: 'queued' })));
    const find = await timed((i) => rows.findOne({ _id: `row ${i * 101}` }));
    const update = await timed((i) => rows.updateOne({ _id: `row ${i * 101}` }, { $set: { state: 'leased' } }));
    const insert = await timed((i) => rows.insertOne({ _id: `new ${i}`, state: 'queued' }));
    console.log(`  ${size} rows: find by _id ${find}, update by _id ${update}, insert ${insert}`);
    await rows.deleteMany({}); // jongodb has no drop
  }
} finally {
  await connection.close();
  await mongo.stop();
}
