import { createHash } from 'node:crypto';
import type { Connection, Model, Schema } from 'mongoose';

/**
 * Collections an audit's rows are spread over. jongodb's cost of a write grows with the square of
 * its collection's rows (docs/decisions/0498-frontier-by-id.md); on MongoDB a spread costs only the
 * merge of sorted reads.
 */
export const SPREAD_COLLECTIONS = 64;

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

  /** Sums `count` over every collection. */
  async sum(count: (model: Model<T>) => Promise<number>): Promise<number> {
    return (await Promise.all(this.all.map(count))).reduce((a, b) => a + b, 0);
  }
}
