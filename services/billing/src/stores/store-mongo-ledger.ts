import { unavailable } from '@webutil/kit';
import type mongoose from 'mongoose';
import {
  type DailyUsage,
  freshCalls,
  type Hold,
  type HoldSpend,
  holdReleased,
  type KeyBudget,
  type KeyLimited,
  type KeyLimitedIf,
  keptOpen,
  type LedgerStore,
  type Reservation,
  type SettleResult,
  type Sweeps,
  settleCredits,
  type UsageRecord,
  unusedCredits,
} from './store.js';
import {
  type AccountDoc,
  type CounterDoc,
  type DocModel,
  type HoldDoc,
  type HoldingDoc,
  increments,
  type Models,
  upsert,
} from './store-mongo-schema.js';

const DAY_MS = 86_400_000;

/**
 * A hold losing races against concurrent changes to its account (holds taking its last cycle
 * credits, a renewal, a key's first hold of a cycle) tries at least MIN_HOLD_ATTEMPTS times, and
 * on for HOLD_BUDGET_MS: within the edge's deadline for an authorization (10 s), so a busy account
 * is answered rather than failed, and a store slow under load does not count as a busy account.
 */
const MIN_HOLD_ATTEMPTS = 20;
const HOLD_BUDGET_MS = 4_000;
/** The longest pause between two tries; each pause is drawn at random up to a bound that doubles. */
const HOLD_BACKOFF_MAX_MS = 100;

/** A pause before a hold's next try: at random up to 5 ms doubled per try, at most HOLD_BACKOFF_MAX_MS. */
const jitteredPause = (attempt: number) =>
  new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(HOLD_BACKOFF_MAX_MS, 5 * 2 ** attempt)));

/** Where a hold lives: an account ('a') or an allowance counter ('c'), by document id. */
interface HoldPlace {
  in: 'a' | 'c';
  docId: string;
  holdId: string;
}

/** Reservation ids name their document (`a|c.<base64url id>.<hold id>`), so settling finds it by _id. */
const reservationId = ({ in: where, docId, holdId }: HoldPlace) =>
  `${where}.${Buffer.from(docId).toString('base64url')}.${holdId}`;

/** A hold's own name (the edge's, or billing's UUID): safe as a field name. */
const HOLD_NAME = /^[A-Za-z0-9_-]{8,64}$/;

function holdPlace(reservation: string): HoldPlace | undefined {
  const [where, docId, holdId, ...rest] = reservation.split('.');
  if ((where !== 'a' && where !== 'c') || !docId || !holdId || rest.length > 0) return undefined;
  return { in: where, docId: Buffer.from(docId, 'base64url').toString(), holdId };
}

const toReservation = (place: HoldPlace, { keyId, ...hold }: HoldDoc): Reservation => ({
  id: reservationId(place),
  accountId: place.in === 'a' ? place.docId : null,
  allowanceKey: place.in === 'c' ? place.docId : null,
  keyId: keyId ?? null,
  ...hold,
});

/**
 * Credit holds, key spend and usage in MongoDB. A credit hold lives in the document whose balance it
 * took (the account, or the anonymous allowance counter), under `holds.<hold id>`: taking the
 * credits and recording the hold is one guarded update of one document, and so is settling it.
 */
export function mongoLedger({ accounts, counters, usage }: Models): LedgerStore & Sweeps {
  async function reserveAccountCredits(
    accountId: string,
    credits: number,
    hold: Hold,
    key: KeyBudget | undefined,
  ): Promise<Reservation | KeyLimited | undefined> {
    const path = `holds.${hold.id}`;
    const spendPath = key && `keySpend.${key.id}`;
    // Each lost race means another change of the account went through; the hold tries again after
    // a pause drawn at random ("full jitter"), so the racers spread out, until its budget is spent.
    const deadline = Date.now() + HOLD_BUDGET_MS;
    const judged = {
      cycleCredits: 1,
      topUpCredits: 1,
      cycleEnd: 1,
      [path]: 1,
      ...(spendPath ? { [spendPath]: 1 } : {}),
    };
    for (let attempt = 0; attempt < MIN_HOLD_ATTEMPTS || Date.now() < deadline; attempt++) {
      if (attempt > 0) await jitteredPause(attempt);
      // Only what the hold is judged on: a busy account's document carries hundreds of holds.
      const account = await accounts.findById(accountId, judged).lean<AccountDoc>();
      // A retried authorization: the hold its first try took (one released since is gone: refused).
      const existing = account?.holds?.[hold.id];
      if (existing) {
        if (existing.settledSpent !== undefined) throw holdReleased();
        return toReservation({ in: 'a', docId: accountId, holdId: hold.id }, existing);
      }
      if (!account || account.cycleCredits + account.topUpCredits < credits) return undefined;
      const fromCycle = Math.min(account.cycleCredits, credits);
      const record: HoldDoc = {
        fromCycle,
        fromTopUp: credits - fromCycle,
        cycleEnd: account.cycleEnd,
        expiresAt: hold.expiresAt,
        ...(key ? { keyId: key.id } : {}),
      };
      const enough =
        record.fromTopUp === 0
          ? { cycleCredits: { $gte: credits } }
          : { cycleCredits: fromCycle, topUpCredits: { $gte: record.fromTopUp } };
      // The key's spend this cycle grows by $inc, guarded by its limit, so that the holds of one
      // busy key do not race each other; its first hold of a cycle sets it, guarded on what was read.
      let spendGuard = {};
      let spendSet = {};
      let spendInc = {};
      if (key && spendPath) {
        const spend = account.keySpend?.[key.id];
        const sameCycle = spend?.cycleEnd === account.cycleEnd;
        const spent = sameCycle && spend ? spend.credits : 0;
        if (key.limit !== null && spent + credits > key.limit) return { keyLimited: { spent } };
        if (sameCycle) {
          spendGuard = {
            [`${spendPath}.cycleEnd`]: account.cycleEnd,
            ...(key.limit !== null ? { [`${spendPath}.credits`]: { $lte: key.limit - credits } } : {}),
          };
          spendInc = { [`${spendPath}.credits`]: credits };
        } else {
          spendGuard = spend
            ? { [`${spendPath}.cycleEnd`]: spend.cycleEnd, [`${spendPath}.credits`]: spend.credits }
            : { [spendPath]: { $exists: false } };
          spendSet = { [spendPath]: { cycleEnd: account.cycleEnd, credits } };
        }
      }
      const taken = await accounts.updateOne(
        { _id: accountId, cycleEnd: account.cycleEnd, [path]: { $exists: false }, ...enough, ...spendGuard },
        {
          $inc: increments({ cycleCredits: -fromCycle, topUpCredits: -record.fromTopUp, openHolds: 1, ...spendInc }),
          $set: { [path]: record, ...spendSet },
        },
      );
      if (taken.modifiedCount === 1) return toReservation({ in: 'a', docId: accountId, holdId: hold.id }, record);
    }
    throw unavailable('LEDGER_BUSY', 'the account is too busy to hold credits right now; try again');
  }

  /** Where a hold named by the edge lies: only documents holding anything are read (openHolds). */
  async function placeOfName(holdId: string): Promise<HoldPlace | undefined> {
    if (!HOLD_NAME.test(holdId)) return undefined;
    const filter = { openHolds: { $gt: 0 }, [`holds.${holdId}`]: { $exists: true } };
    const account = await accounts.findOne(filter, { _id: 1 }).lean<{ _id: string }>();
    if (account) return { in: 'a', docId: account._id, holdId };
    const counter = await counters.findOne(filter, { _id: 1 }).lean<{ _id: string }>();
    return counter ? { in: 'c', docId: counter._id, holdId } : undefined;
  }

  const ledger: LedgerStore & Sweeps = {
    /**
     * Cycle credits first, then top-ups. One update takes the credits and records the hold, guarded
     * on the cycle just read and on enough credits (exactly the cycle balance read, when the hold
     * straddles both); when another change got there first, it is read again.
     */
    reserveCredits<K extends KeyBudget | undefined = undefined>(
      accountId: string,
      credits: number,
      hold: Hold,
      key?: K,
    ): Promise<Reservation | KeyLimitedIf<K> | undefined> {
      return reserveAccountCredits(accountId, credits, hold, key) as Promise<Reservation | KeyLimitedIf<K> | undefined>;
    },

    async reserveAllowance(
      allowanceKey: string,
      credits: number,
      max: number,
      allowanceExpiresAt: number,
      hold: Hold,
    ): Promise<Reservation | undefined> {
      if (credits > max) return undefined;
      const path = `holds.${hold.id}`;
      const record: HoldDoc = { fromCycle: credits, fromTopUp: 0, cycleEnd: null, expiresAt: hold.expiresAt };
      const taken = await upsert(
        counters,
        { _id: allowanceKey, value: { $lte: max - credits }, [path]: { $exists: false } },
        {
          $inc: { value: credits, openHolds: 1 },
          $set: { [path]: record },
          $setOnInsert: { expiresAt: new Date(allowanceExpiresAt) },
        },
      );
      if (taken) return toReservation({ in: 'c', docId: allowanceKey, holdId: hold.id }, record);
      // Refused: short of allowance, or a retried authorization whose hold is already there.
      const doc = await counters.findOne({ _id: allowanceKey, [path]: { $exists: true } }).lean<CounterDoc>();
      const existing = doc?.holds?.[hold.id];
      if (existing?.settledSpent !== undefined) throw holdReleased();
      return existing ? toReservation({ in: 'c', docId: allowanceKey, holdId: hold.id }, existing) : undefined;
    },

    /**
     * One update ends the hold and returns its unused credits, guarded on the hold still being
     * unsettled as read (so exactly one settlement wins) and, for an account, on the cycle the return
     * was judged against (cycle credits return only to the cycle they came from). A remembered hold
     * stays in place as a settled record (counted in openHolds until the sweep removes it); a partial
     * settlement rewrites the hold smaller, guarded on what it held as read.
     */
    async settle(reservationId: string, spentCredits: number): Promise<Reservation | undefined> {
      return settleCredits(ledger, reservationId, spentCredits);
    },

    async settleCalls(reservationId: string, spend: HoldSpend): Promise<SettleResult | undefined> {
      const place = holdPlace(reservationId) ?? (await placeOfName(reservationId));
      if (!place) return undefined;
      const path = `holds.${place.holdId}`;
      // The two documents hold holds alike; one model type serves both.
      const model = (place.in === 'a' ? accounts : counters) as unknown as DocModel<AccountDoc>;
      for (;;) {
        const doc = await model
          .findOne({ _id: place.docId, [path]: { $exists: true } })
          .lean<AccountDoc | CounterDoc>();
        const hold = doc?.holds?.[place.holdId];
        if (!doc || !hold) return undefined;
        if (hold.settledSpent !== undefined) return { settledBefore: { spentCredits: hold.settledSpent } };
        const { fresh, credits: spentCredits } = freshCalls(spend, hold.spentCalls ?? []);
        const asRead = {
          _id: place.docId,
          [`${path}.fromCycle`]: hold.fromCycle,
          [`${path}.fromTopUp`]: hold.fromTopUp,
          [`${path}.settledSpent`]: { $exists: false },
        };
        let update: mongoose.UpdateQuery<AccountDoc>;
        let guard: Record<string, unknown> = asRead;
        if (spend.keepOpen) {
          const named = spend.calls.flatMap(({ callId }, i) => (fresh[i] && callId !== undefined ? [callId] : []));
          const left = keptOpen(hold, spentCredits);
          // Nothing new to spend (a retry): an update that changes nothing would match no change.
          if (named.length === 0 && spentCredits === 0) return { settled: toReservation(place, hold), fresh };
          const spentCalls = [...(hold.spentCalls ?? []), ...named];
          update = {
            $set: {
              [`${path}.fromCycle`]: left.fromCycle,
              [`${path}.fromTopUp`]: left.fromTopUp,
              [`${path}.spentCalls`]: spentCalls,
              [`${path}.partlySpent`]:
                (hold.partlySpent ?? 0) + hold.fromCycle + hold.fromTopUp - left.fromCycle - left.fromTopUp,
            },
          };
        } else {
          const { toCycle, toTopUp } = unusedCredits(hold, spentCredits);
          const spent = hold.fromCycle + hold.fromTopUp - toCycle - toTopUp;
          const ended =
            spend.rememberUntil === undefined
              ? { $unset: { [path]: '' } }
              : {
                  $set: {
                    [path]: { ...hold, settledSpent: spent + (hold.partlySpent ?? 0), expiresAt: spend.rememberUntil },
                  },
                };
          // A forgotten hold leaves openHolds; a remembered one when the sweep removes it.
          const holds = spend.rememberUntil === undefined ? -1 : 0;
          if (place.in === 'c') {
            update = { ...ended, $inc: increments({ openHolds: holds, value: -toCycle }) };
          } else {
            const account = doc as AccountDoc;
            const sameCycle = hold.cycleEnd === account.cycleEnd;
            // The key's spend was set in this hold's cycle; once the account has moved on, it is left alone.
            const keyRefund =
              hold.keyId && sameCycle && account.keySpend?.[hold.keyId]
                ? { [`keySpend.${hold.keyId}.credits`]: -(toCycle + toTopUp) }
                : {};
            update = {
              ...ended,
              $inc: increments({
                openHolds: holds,
                cycleCredits: sameCycle ? toCycle : 0,
                topUpCredits: toTopUp,
                ...keyRefund,
              }),
            };
            guard = { ...asRead, cycleEnd: account.cycleEnd };
          }
        }
        const settled = await model.updateOne(guard, update);
        if (settled.modifiedCount === 1) return { settled: toReservation(place, hold), fresh };
        // Settled or spent from meanwhile, or the cycle renewed: read again and judge again.
      }
    },

    /** Reads only the documents holding anything (an index on openHolds). */
    async expiredReservations(now: number, limit: number): Promise<Reservation[]> {
      const holding = { openHolds: { $gt: 0 } };
      const [inAccounts, inCounters] = await Promise.all([
        accounts.find(holding, { holds: 1 }).lean<HoldingDoc[]>(),
        counters.find(holding, { holds: 1 }).lean<HoldingDoc[]>(),
      ]);
      const expired: Reservation[] = [];
      for (const [where, docs] of [
        ['a', inAccounts],
        ['c', inCounters],
      ] as const) {
        for (const doc of docs) {
          for (const [holdId, hold] of Object.entries(doc.holds ?? {})) {
            if (hold.expiresAt <= now && hold.settledSpent === undefined)
              expired.push(toReservation({ in: where, docId: doc._id, holdId }, hold));
          }
        }
      }
      return expired.sort((x, y) => x.expiresAt - y.expiresAt).slice(0, limit);
    },

    async keySpend(accountId: string, cycleEnd: number): Promise<Map<string, number>> {
      const doc = await accounts.findById(accountId, { keySpend: 1 }).lean<Pick<AccountDoc, 'keySpend'>>();
      const spend = new Map<string, number>();
      for (const [keyId, entry] of Object.entries(doc?.keySpend ?? {}))
        if (entry.cycleEnd === cycleEnd) spend.set(keyId, entry.credits);
      return spend;
    },

    async addUsage(records: readonly UsageRecord[]): Promise<void> {
      if (records.length > 0) await usage.insertMany(records);
    },

    async usageByDay(accountId: string, from: number, to: number): Promise<DailyUsage[]> {
      // Summed here, not by an aggregation pipeline: jongodb answers find() alone.
      const totals = new Map<string, DailyUsage>();
      const calls = usage
        .find({ accountId, at: { $gte: from, $lt: to } }, { operation: 1, credits: 1, at: 1, _id: 0 })
        .lean<Pick<UsageRecord, 'operation' | 'credits' | 'at'>>()
        .cursor();
      for await (const { operation, credits, at } of calls) {
        const day = Math.floor(at / DAY_MS) * DAY_MS;
        const key = `${day}|${operation}`;
        const total = totals.get(key) ?? { day, operation, credits: 0, calls: 0 };
        total.credits += credits;
        total.calls += 1;
        totals.set(key, total);
      }
      return [...totals.values()].sort((x, y) => x.day - y.day || (x.operation < y.operation ? -1 : 1));
    },

    async recentUsage(accountId: string, limit: number): Promise<UsageRecord[]> {
      const docs = await usage.find({ accountId }).sort({ at: -1, _id: -1 }).limit(limit).lean<UsageRecord[]>();
      return docs.map(({ accountId, operation, credits, at, target }) => ({
        accountId,
        operation,
        credits,
        at,
        ...(target ? { target } : {}),
      }));
    },

    /** Removes settled holds remembered past their time (the rest expires by TTL indexes). */
    async sweep(now: number): Promise<void> {
      const holding = { openHolds: { $gt: 0 } };
      for (const model of [accounts, counters] as unknown as DocModel<AccountDoc>[]) {
        for (const doc of await model.find(holding, { holds: 1 }).lean<HoldingDoc[]>()) {
          for (const [holdId, hold] of Object.entries(doc.holds ?? {})) {
            if (hold.settledSpent === undefined || hold.expiresAt > now) continue;
            const path = `holds.${holdId}`;
            await model.updateOne(
              { _id: doc._id, [`${path}.settledSpent`]: { $exists: true } },
              { $unset: { [path]: '' }, $inc: { openHolds: -1 } },
            );
          }
        }
      }
    },
  };
  return ledger;
}
