/**
 * The cluster store on MongoDB through mongoose, keeping to what every MongoDB-wire server here
 * supports (jongodb included): unique _id inserts, guarded updateOne/updateMany with $set, plain finds,
 * and an upserting $inc for the daily rollup (`<monitor id>@<day>`).
 * A run's _id is its claim: `<monitor id>@<slot>`, inserted once across replicas.
 */
import mongoose, { type Connection, type Model } from 'mongoose';
import type {
  DayRollup,
  IncidentRecord,
  MonitorChanges,
  MonitorRecord,
  MonitorStore,
  RollupSample,
  RunPage,
  RunRecord,
  RunResult,
} from './store.js';

type MonitorDoc = Omit<MonitorRecord, 'id'> & { _id: string };
type RunDoc = Omit<RunRecord, 'id'> & { _id: string };
type IncidentDoc = Omit<IncidentRecord, 'id'> & { _id: string };
type DayDoc = DayRollup & { _id: string };

const loose = { versionKey: false, minimize: false, strict: false } as const;
const monitorSchema = new mongoose.Schema<MonitorDoc>({ _id: String }, loose);
monitorSchema.index({ subject: 1, createdAt: -1 });
monitorSchema.index({ state: 1, nextRunAt: 1 });
const runSchema = new mongoose.Schema<RunDoc>({ _id: String }, loose);
runSchema.index({ monitorId: 1, slot: -1 });
runSchema.index({ outcome: 1, startedAt: 1 });
// The retention sweep's range (a plain index: a TTL index needs a Date field and a server that runs its monitor).
runSchema.index({ slot: 1 });
const incidentSchema = new mongoose.Schema<IncidentDoc>({ _id: String }, loose);
incidentSchema.index({ monitorId: 1, openedAt: -1 });
const daySchema = new mongoose.Schema<DayDoc>({ _id: String }, loose);
daySchema.index({ monitorId: 1, day: 1 });

const isDuplicateKey = (err: unknown) => (err as { code?: number }).code === 11000;
const monitorOf = ({ _id, ...rest }: MonitorDoc): MonitorRecord => ({ id: _id, ...rest });
const runOf = ({ _id, ...rest }: RunDoc): RunRecord => ({ id: _id, ...rest });
const incidentOf = ({ _id, ...rest }: IncidentDoc): IncidentRecord => ({ id: _id, ...rest });

/** $set of the defined fields, $unset of those given as undefined. */
function changeOf(changes: object): { $set: object; $unset?: object } {
  const entries = Object.entries(changes);
  const unset = entries.filter(([, v]) => v === undefined).map(([k]) => [k, '']);
  return {
    $set: Object.fromEntries(entries.filter(([, v]) => v !== undefined)),
    ...(unset.length ? { $unset: Object.fromEntries(unset) } : {}),
  };
}

export class MongoMonitorStore implements MonitorStore {
  private constructor(
    private readonly connection: Connection,
    private readonly monitors: Model<MonitorDoc>,
    private readonly runs: Model<RunDoc>,
    private readonly incidents: Model<IncidentDoc>,
    private readonly days: Model<DayDoc>,
  ) {}

  static async connect(url: string, prefix = 'monitor'): Promise<MongoMonitorStore> {
    const connection = await mongoose
      .createConnection(url, { autoCreate: false, autoIndex: false, serverSelectionTimeoutMS: 10_000 })
      .asPromise();
    const monitors = connection.model<MonitorDoc>('Monitor', monitorSchema, `${prefix}_monitors`);
    const runs = connection.model<RunDoc>('MonitorRun', runSchema, `${prefix}_runs`);
    const incidents = connection.model<IncidentDoc>('MonitorIncident', incidentSchema, `${prefix}_incidents`);
    const days = connection.model<DayDoc>('MonitorDay', daySchema, `${prefix}_days`);
    await Promise.all([
      monitors.createIndexes(),
      runs.createIndexes(),
      incidents.createIndexes(),
      days.createIndexes(),
    ]);
    return new MongoMonitorStore(connection, monitors, runs, incidents, days);
  }

  async insertMonitor({ id, ...rest }: MonitorRecord): Promise<void> {
    await this.monitors.collection.insertOne(strip({ _id: id, ...rest }) as never);
  }

  countMonitors(subject: string): Promise<number> {
    return this.monitors.countDocuments({ subject });
  }

  async listMonitors(subject: string): Promise<MonitorRecord[]> {
    const docs = await this.monitors.find({ subject }).sort({ createdAt: -1, _id: -1 }).lean<MonitorDoc[]>();
    return docs.map(monitorOf);
  }

  async getMonitor(subject: string, id: string): Promise<MonitorRecord | undefined> {
    const doc = await this.monitors.findOne({ _id: id, subject }).lean<MonitorDoc>();
    return doc ? monitorOf(doc) : undefined;
  }

  async updateMonitor(subject: string, id: string, changes: MonitorChanges): Promise<boolean> {
    const result = await this.monitors.updateOne({ _id: id, subject }, changeOf(changes));
    return result.matchedCount > 0;
  }

  async deleteMonitor(subject: string, id: string): Promise<boolean> {
    const result = await this.monitors.deleteOne({ _id: id, subject });
    if (result.deletedCount === 0) return false;
    await this.runs.deleteMany({ monitorId: id });
    await this.incidents.deleteMany({ monitorId: id });
    await this.days.deleteMany({ monitorId: id });
    return true;
  }

  async pauseAll(subject: string, reason: string, at: number): Promise<string[]> {
    const active = await this.monitors.find({ subject, state: 'active' }, { _id: 1 }).lean<{ _id: string }[]>();
    // One conditional update each: a replica pausing the same account at once gets only the monitors
    // it moved, so the two never both answer one monitor (one notice per pause).
    const moved = await Promise.all(
      active.map(async ({ _id }) => {
        const result = await this.monitors.updateOne(
          { _id, state: 'active' },
          { $set: { state: 'paused', pausedReason: reason, updatedAt: at } },
        );
        return result.modifiedCount > 0 ? _id : undefined;
      }),
    );
    return moved.filter((id): id is string => id !== undefined);
  }

  async dueMonitors(now: number, limit: number, exceptSubjects: readonly string[] = []): Promise<MonitorRecord[]> {
    const docs = await this.monitors
      .find({
        state: 'active',
        nextRunAt: { $lte: now },
        ...(exceptSubjects.length ? { subject: { $nin: [...exceptSubjects] } } : {}),
      })
      .sort({ nextRunAt: 1 })
      .limit(limit)
      .lean<MonitorDoc[]>();
    return docs.map(monitorOf);
  }

  async advance(id: string, fromNextRunAt: number, nextRunAt: number): Promise<boolean> {
    const result = await this.monitors.updateOne({ _id: id, nextRunAt: fromNextRunAt }, { $set: { nextRunAt } });
    return result.modifiedCount > 0;
  }

  async claimRun({ id, ...rest }: RunRecord): Promise<boolean> {
    try {
      await this.runs.collection.insertOne(strip({ _id: id, ...rest }) as never);
      return true;
    } catch (err) {
      if (isDuplicateKey(err)) return false;
      throw err;
    }
  }

  async finishRun(id: string, result: RunResult): Promise<void> {
    await this.runs.updateOne({ _id: id }, changeOf(result));
  }

  async interruptStale(before: number, at: number): Promise<number> {
    const result = await this.runs.updateMany(
      { outcome: 'running', startedAt: { $lt: before } },
      { $set: { outcome: 'interrupted', reason: 'the replica running it stopped', finishedAt: at } },
    );
    return result.modifiedCount;
  }

  async deleteRunsBefore(slot: number, limit: number): Promise<number> {
    // A batch by id: deleteMany takes no limit, and one sweep must not hold the store for millions of runs.
    const old = await this.runs
      .find({ slot: { $lt: slot } }, { _id: 1 })
      .limit(limit)
      .lean<{ _id: string }[]>();
    if (old.length === 0) return 0;
    const result = await this.runs.deleteMany({ _id: { $in: old.map((doc) => doc._id) } });
    return result.deletedCount;
  }

  async listRuns(monitorId: string, page: RunPage): Promise<RunRecord[]> {
    const slot: Record<string, number> = {
      $gte: page.from ?? 0,
      $lte: Math.min(page.to ?? Number.MAX_SAFE_INTEGER, (page.beforeSlot ?? Number.MAX_SAFE_INTEGER) - 1),
    };
    const docs = await this.runs.find({ monitorId, slot }).sort({ slot: -1 }).limit(page.limit).lean<RunDoc[]>();
    return docs.map(runOf);
  }

  async previousRun(monitorId: string, beforeSlot: number): Promise<RunRecord | undefined> {
    const doc = await this.runs
      .findOne({ monitorId, slot: { $lt: beforeSlot }, outcome: { $in: ['ok', 'failed'] } })
      .sort({ slot: -1 })
      .lean<RunDoc>();
    return doc ? runOf(doc) : undefined;
  }

  async addToDay(monitorId: string, day: number, sample: RollupSample): Promise<void> {
    const { responseTimeMaxMs, ...sums } = sample;
    const _id = `${monitorId}@${day}`;
    await this.days.updateOne(
      { _id },
      { $setOnInsert: { monitorId, day, responseTimeMaxMs }, $inc: sums },
      { upsert: true },
    );
    // jongodb has no $max: a guarded $set only ever raises the slowest, whatever the order of runs.
    await this.days.updateOne({ _id, responseTimeMaxMs: { $lt: responseTimeMaxMs } }, { $set: { responseTimeMaxMs } });
  }

  async listDays(monitorId: string, fromDay: number, toDay: number): Promise<DayRollup[]> {
    const docs = await this.days
      .find({ monitorId, day: { $gte: fromDay, $lte: toDay } })
      .sort({ day: 1 })
      .lean<DayDoc[]>();
    return docs.map(({ _id, ...rest }) => rest);
  }

  async openIncident({ id, ...rest }: IncidentRecord): Promise<void> {
    await this.incidents.collection.insertOne(strip({ _id: id, ...rest }) as never);
  }

  async openIncidentOf(monitorId: string): Promise<IncidentRecord | undefined> {
    const doc = await this.incidents.findOne({ monitorId, state: 'open' }).sort({ openedAt: -1 }).lean<IncidentDoc>();
    return doc ? incidentOf(doc) : undefined;
  }

  async closeIncident(id: string, closedAt: number): Promise<void> {
    await this.incidents.updateOne({ _id: id }, { $set: { state: 'closed', closedAt } });
  }

  async listIncidents(monitorId: string, limit: number): Promise<IncidentRecord[]> {
    const docs = await this.incidents.find({ monitorId }).sort({ openedAt: -1 }).limit(limit).lean<IncidentDoc[]>();
    return docs.map(incidentOf);
  }

  async close(): Promise<void> {
    await this.connection.close();
  }
}

/** A document without its undefined fields (absent, not null). */
function strip<T extends object>(doc: T): T {
  return Object.fromEntries(Object.entries(doc).filter(([, v]) => v !== undefined)) as T;
}
