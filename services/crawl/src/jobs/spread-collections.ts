import { createHash } from 'node:crypto';
import type { Connection, Model, Schema } from 'mongoose';

/**
 * Collections an audit's rows are spread over. jongodb's cost of a write grows with the square of
 * its collection's rows (docs/decisions/0498-frontier-by-id.md); on MongoDB a spread costs only the
 * merge of sorted reads.
 */
export const SPREAD_COLLECTIONS = 64;

const DUPLICATE_KEY = 11000;

/**
 * Whether a failed insert failed only on keys stored already (the driver names one write error or
 * several; a server may name only the code).
 */
function onlyDuplicates(err: unknown): boolean {
  const failed = err as { code?: number; writeErrors?: { code?: number } | { code?: number }[] };
  const errors = [failed.writeErrors ?? []].flat();
  return errors.length > 0 ? errors.every((e) => e.code === DUPLICATE_KEY) : failed.code === DUPLICATE_KEY;
}

/** What `insertNew` stored: how many documents, and those of collections where a key was stored already. */
export interface Inserted<D> {
  inserted: number;
  /** Documents of a collection whose insert met a duplicate: each may be in or not (jongodb stops at the first). */
  clashed: D[];
}

/** One logical collection spread over `<name>_<n>` collections by a hash of a key. */
export class SpreadCollections<T> {
  private constructor(readonly all: readonly Model<T>[]) {}

  static async open<T>(
    connection: Connection,
    modelName: string,
    schema: Schema<T>,
    name: string,
    count = SPREAD_COLLECTIONS,
  ): Promise<SpreadCollections<T>> {
    const all = Array.from({ length: count }, (_, i) =>
      connection.model<T>(`${modelName}${i}`, schema, `${name}_${i}`),
    );
    for (const model of all) await model.createIndexes();
    return new SpreadCollections(all);
  }

  /** The collection of `key`. */
  of(key: string): Model<T> {
    const hash = createHash('sha1').update(key).digest().readUInt32BE(0);
    return this.all[hash % this.all.length] as Model<T>;
  }

  /** `items` grouped by the collection of their key. */
  grouped<I>(items: readonly I[], key: (item: I) => string): [Model<T>, I[]][] {
    const groups = new Map<Model<T>, I[]>();
    for (const item of items) {
      const model = this.of(key(item));
      const group = groups.get(model);
      if (group) group.push(item);
      else groups.set(model, [item]);
    }
    return [...groups];
  }

  /**
   * Inserts `docs` with one insert per collection (of `key`, by default the `_id`); a document
   * whose `_id` is stored already is no error.
   */
  async insertNew<D extends { _id: string }>(
    docs: readonly D[],
    key: (doc: D) => string = (doc) => doc._id,
  ): Promise<Inserted<D>> {
    const results = await Promise.all(
      this.grouped(docs, key).map(async ([model, group]) => {
        try {
          return { inserted: (await model.collection.insertMany(group as never[], { ordered: false })).insertedCount };
        } catch (err) {
          if (!onlyDuplicates(err)) throw err;
          return { inserted: (err as { insertedCount?: number }).insertedCount ?? 0, clashed: group };
        }
      }),
    );
    return {
      inserted: results.reduce((n, r) => n + r.inserted, 0),
      clashed: results.flatMap((r) => r.clashed ?? []),
    };
  }

  /** Sums `count` over every collection. */
  async sum(count: (model: Model<T>) => Promise<number>): Promise<number> {
    return (await Promise.all(this.all.map(count))).reduce((a, b) => a + b, 0);
  }
}

/**
 * The rows of every collection in one order: a merge of each collection's sorted reads, `per` rows
 * a read, so a batch of the merged order holds `per` rows of each collection at most beside it.
 * `read` gives a collection's next rows in `compare`'s order after `after` (from the start: undefined).
 */
export async function* mergedReads<T, R>(
  collections: SpreadCollections<T>,
  read: (model: Model<T>, after: R | undefined, limit: number) => Promise<R[]>,
  compare: (a: R, b: R) => number,
  per: number,
): AsyncGenerator<R> {
  const heads = await Promise.all(
    collections.all.map(async (model) => {
      const rows = await read(model, undefined, per);
      return { model, rows, at: 0, ended: rows.length < per };
    }),
  );
  for (;;) {
    let best: (typeof heads)[number] | undefined;
    for (const head of heads) {
      if (head.at >= head.rows.length) continue;
      if (!best || compare(head.rows[head.at] as R, best.rows[best.at] as R) < 0) best = head;
    }
    if (!best) return;
    const row = best.rows[best.at++] as R;
    yield row;
    if (best.at >= best.rows.length && !best.ended) {
      best.rows = await read(best.model, row, per);
      best.at = 0;
      best.ended = best.rows.length < per;
    }
  }
}
