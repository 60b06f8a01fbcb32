/**
 * A minimal reproduction, against the MongoDB-wire server alone (jongodb unless MONGO_URL is
 * set), of what the billing store's holds rely on: MongoDB applies a guarded single-document
 * update atomically. One document holds `credits`; `calls` concurrent guarded updates each take one
 * credit and record a hold of their own (`{n: {$gte: 1}, holds.<id>: {$exists: false}}` with
 * `$inc n: -1` and `$set holds.<id>`), as `reserveCredits` does. An atomic server ends with
 * modified = holds recorded = credits taken = min(calls, credits) and n >= 0. Prints one line per
 * round and exits 1 when any round broke that.
 *
 *   npx tsx services/billing/test/jongodb-atomicity.ts [rounds] [calls] [credits] [connections]
 */
import { startMongo } from '@webutil/scripts/mongo-under-test';
import mongoose from 'mongoose';

const [rounds = 10, calls = 200, credits = 100, connections = 1] = process.argv.slice(2).map(Number);
const mongo = await startMongo();
const clients = await Promise.all(
  Array.from({ length: connections }, () => new mongoose.mongo.MongoClient(mongo.url).connect()),
);
let broken = 0;
try {
  for (let round = 0; round < rounds; round++) {
    const id = `account-${round}`;
    const docs = (i: number) => {
      const client = clients[i % clients.length];
      if (!client) throw new Error('no connection');
      return client.db('atomicity').collection<{ _id: string; n: number; holds: Record<string, number> }>('accounts');
    };
    await docs(0).insertOne({ _id: id, n: credits, holds: {} });
    const results = await Promise.all(
      Array.from({ length: calls }, (_, i) =>
        docs(i).updateOne(
          { _id: id, n: { $gte: 1 }, [`holds.h${i}`]: { $exists: false } },
          { $inc: { n: -1 }, $set: { [`holds.h${i}`]: 1 } },
        ),
      ),
    );
    const modified = results.filter((result) => result.modifiedCount === 1).length;
    const doc = await docs(0).findOne({ _id: id });
    if (!doc) throw new Error('the document is gone');
    const holds = Object.keys(doc.holds).length;
    const taken = credits - doc.n;
    const atomic = modified === Math.min(calls, credits) && holds === modified && taken === modified && doc.n >= 0;
    if (!atomic) broken++;
    console.log(
      `${mongo.label} round ${round}: ${modified} updates said they applied, ${holds} holds recorded, ` +
        `${taken} credits taken, n = ${doc.n}${atomic ? '' : '  <- not atomic'}`,
    );
  }
} finally {
  await Promise.all(clients.map((client) => client.close()));
  await mongo.stop();
}
console.log(`${broken} of ${rounds} rounds broke single-document atomicity`);
process.exit(broken > 0 ? 1 : 0);
