/**
 * Credit leases, the quota allocation of Google's ESP applied to credits: a busy API-key caller's
 * authorization may hold a block of its credits (a lease) instead of one call's, and this edge
 * then pays that caller's calls from it without an authorization of their own, for at most
 * `ttlMs`. Each successful call is spent from the lease at billing before it is answered (a partial
 * settlement, naming the call, that keeps the rest held: decision 0255). When the lease ends (its
 * time is up, a newer lease replaces it, its caller's view went stale) and its calls have
 * finished, one settlement lists what its successful calls cost (billing spends those not spent
 * yet) and returns the rest. A lease whose final settlement never arrives (the edge crashed) ends
 * as its expiry decides at billing (what was not spent returns), and settling twice changes nothing.
 *
 * Billing decides whether a lease is granted and how many credits it holds; these rules decide
 * when this edge offers to carry one and how it pays calls from it. They are a state machine, one
 * state per caller: each function takes the state and an event (with the time) and returns the
 * next state and what to do (settle an ended lease); the meter carries that out.
 */
import type { SpentCall } from '@webutil/proto/webutil/billing/v1/billing';

/** Paid calls of a caller that went to billing within one lease lifetime, after which this edge offers a lease. */
const BUSY_CALLS = 8;
/** Routes whose calls a lease pays for have at most this deadline: the hold at billing outlives its last call. */
export const MAX_LEASED_CALL_MS = 60_000;
/**
 * How long past its last call's deadline billing keeps an unsettled hold (billing's
 * RESERVATION_GRACE_MS default): a settlement still unsent by then is dropped, not retried.
 */
export const HOLD_GRACE_MS = 60_000;

/** How long billing holds a lease: its lifetime plus the deadline of a call taken at its end. */
export const leaseHoldMs = (ttlMs: number) => ttlMs + MAX_LEASED_CALL_MS;

/** The calls a lease paid for, newest first (each success adds one without copying the others). */
interface SpentCalls {
  readonly call: SpentCall;
  readonly earlier: SpentCalls | undefined;
}

export interface Lease {
  readonly reservationId: string;
  readonly credits: number;
  /** Credits given to calls in flight or spent. */
  readonly taken: number;
  readonly inFlight: number;
  readonly spent: SpentCalls | undefined;
  /** No new calls after this. */
  readonly endsAt: number;
  /** Billing returns the hold by itself after this: its settlement is pointless then. */
  readonly expiresAt: number;
}

/** One caller's leases. */
export interface CallerLeases {
  /** The lease new calls take from, if any. */
  readonly open: Lease | undefined;
  /** Leases that have ended and wait for their last calls to finish before they settle. */
  readonly ended: readonly Lease[];
  /** A lease offered to billing and not yet answered: callers arriving meanwhile wait for it. */
  readonly asking: boolean;
  /** Paid calls that went to billing since `countedSince`, to see a busy caller. */
  readonly calls: number;
  readonly countedSince: number;
  /** Billing held a call on its own instead of the lease offered: no new offer before this. */
  readonly declinedUntil: number;
}

/** A decision: settle an ended lease whose calls have all finished. */
export interface LeaseSettlement {
  readonly reservationId: string;
  /** The calls it paid for, oldest first: billing spends their credits. */
  readonly spent: SpentCall[];
  readonly expiresAt: number;
  /** Credits it did not spend: they go back to the caller (its view counts them again). */
  readonly returned: number;
}

export interface Step {
  readonly state: CallerLeases;
  readonly settle: readonly LeaseSettlement[];
}

/** Billing's answer to an authorization that offered to carry a lease. */
export type LeaseAnswer =
  /** The hold is a lease of `credits`, and the call (of `callCredits`) its first. */
  | { readonly granted: { readonly reservationId: string; readonly credits: number; readonly callCredits: number } }
  /** The call was held on its own (too few credits for a lease): not offered again for a lease lifetime. */
  | { readonly granted?: undefined; readonly declined: true }
  /** Refused, or billing did not answer: the next call may offer again. */
  | { readonly granted?: undefined; readonly declined: false };

const NOTHING: readonly LeaseSettlement[] = [];

export const newCaller = (now: number): CallerLeases => ({
  open: undefined,
  ended: [],
  asking: false,
  calls: 0,
  countedSince: now,
  declinedUntil: 0,
});

/**
 * A call of `credits` asks to be paid from the open lease: `paidBy` is that lease's reservation,
 * undefined when there is none, it has too few credits left, or its time is up (it ends).
 */
export function take(state: CallerLeases, credits: number, now: number): Step & { paidBy?: string } {
  const lease = state.open;
  if (!lease) return { state, settle: NOTHING };
  if (now >= lease.endsAt) return end(state);
  if (lease.credits - lease.taken < credits) return { state, settle: NOTHING };
  const open = { ...lease, taken: lease.taken + credits, inFlight: lease.inFlight + 1 };
  return { state: { ...state, open }, settle: NOTHING, paidBy: lease.reservationId };
}

/**
 * A paid call goes to billing: it counts toward seeing the caller busy. `offer`: the call offers
 * to carry a lease (decided before any wait, so of the callers that waited for one lease only the
 * first offers the next).
 */
export function toBilling(state: CallerLeases, now: number, ttlMs: number): { state: CallerLeases; offer: boolean } {
  const renewed = now - state.countedSince >= ttlMs;
  const calls = renewed ? 1 : state.calls + 1;
  const offer = calls > BUSY_CALLS && !state.asking && now >= state.declinedUntil;
  return {
    state: { ...state, calls, countedSince: renewed ? now : state.countedSince, asking: state.asking || offer },
    offer,
  };
}

/** Billing answered the call that offered a lease: a granted lease replaces the open one. */
export function answered(state: CallerLeases, answer: LeaseAnswer, now: number, ttlMs: number): Step {
  const asked = { ...state, asking: false };
  if (!answer.granted)
    return { state: answer.declined ? { ...asked, declinedUntil: now + ttlMs } : asked, settle: NOTHING };
  const { reservationId, credits, callCredits } = answer.granted;
  const replaced = end(asked);
  const open: Lease = {
    reservationId,
    credits,
    taken: callCredits,
    inFlight: 1,
    spent: undefined,
    endsAt: now + ttlMs,
    expiresAt: now + leaseHoldMs(ttlMs) + HOLD_GRACE_MS,
  };
  return { state: { ...replaced.state, open }, settle: replaced.settle };
}

/**
 * A call paid from lease `reservationId` has finished: `spent`, its credits are spent; else they
 * go back to the lease. A call finished twice, or one of a lease settled already, changes nothing.
 */
export function finish(state: CallerLeases, reservationId: string, call: SpentCall, spent: boolean): Step {
  const apply = (lease: Lease): Lease => ({
    ...lease,
    inFlight: lease.inFlight - 1,
    taken: spent ? lease.taken : lease.taken - call.credits,
    spent: spent ? { call, earlier: lease.spent } : lease.spent,
  });
  const { open } = state;
  if (open?.reservationId === reservationId) {
    return open.inFlight > 0 ? { state: { ...state, open: apply(open) }, settle: NOTHING } : { state, settle: NOTHING };
  }
  const ended = state.ended.find((lease) => lease.reservationId === reservationId);
  if (!ended || ended.inFlight === 0) return { state, settle: NOTHING };
  const finished = apply(ended);
  const others = state.ended.filter((lease) => lease !== ended);
  if (finished.inFlight > 0) return { state: { ...state, ended: [...others, finished] }, settle: NOTHING };
  return { state: { ...state, ended: others }, settle: [settlement(finished)] };
}

/**
 * A call paid from lease `reservationId` succeeded: the partial settlement that spends it from the
 * lease at billing before it is answered, the rest staying held. Undefined when the lease is
 * unknown (lost, or settled already).
 */
export function spending(state: CallerLeases, reservationId: string, call: SpentCall): LeaseSettlement | undefined {
  const lease = [state.open, ...state.ended].find((held) => held?.reservationId === reservationId);
  return lease && { reservationId, spent: [call], expiresAt: lease.expiresAt, returned: 0 };
}

/**
 * Billing says lease `reservationId` is gone (it expired there, its unspent credits returned): it
 * pays for nothing more, and nothing of it is settled.
 */
export function lost(state: CallerLeases, reservationId: string): Step {
  const open = state.open?.reservationId === reservationId ? undefined : state.open;
  const ended = state.ended.filter((lease) => lease.reservationId !== reservationId);
  return { state: { ...state, open, ended }, settle: NOTHING };
}

/**
 * Ends the open lease: no new calls; it settles once its calls have finished. Its time is up, its
 * caller's view went stale, a newer lease replaces it, or the edge shuts down.
 */
export function end(state: CallerLeases): Step {
  const lease = state.open;
  if (!lease) return { state, settle: NOTHING };
  if (lease.inFlight > 0)
    return { state: { ...state, open: undefined, ended: [...state.ended, lease] }, settle: NOTHING };
  return { state: { ...state, open: undefined }, settle: [settlement(lease)] };
}

/**
 * The periodic check: ends a lease whose time is up. `forget`: the caller has gone quiet (no
 * lease, none asked for, no call counted for a lease lifetime), its state can go.
 */
export function sweep(state: CallerLeases, now: number, ttlMs: number): Step & { forget: boolean } {
  const step = state.open && now >= state.open.endsAt ? end(state) : { state, settle: NOTHING };
  const { open, asking, ended, countedSince } = step.state;
  const forget = !open && !asking && ended.length === 0 && now - countedSince >= ttlMs;
  return { ...step, forget };
}

/**
 * Credits the caller's leases hold and have not spent: the open one's not given to a call, and
 * those of ended leases not settled yet. Billing counts them as held; the caller still has them.
 */
export function unused(state: CallerLeases): number {
  let credits = state.open ? state.open.credits - state.open.taken : 0;
  for (const lease of state.ended) credits += lease.credits - lease.taken;
  return credits;
}

function settlement(lease: Lease): LeaseSettlement {
  const spent: SpentCall[] = [];
  for (let calls = lease.spent; calls; calls = calls.earlier) spent.push(calls.call);
  return {
    reservationId: lease.reservationId,
    spent: spent.reverse(),
    expiresAt: lease.expiresAt,
    returned: lease.credits - lease.taken,
  };
}
