/**
 * Metering: what every route's call costs the caller, the edge's side of billing's credit ledger.
 * The only door into this folder; the pipeline, the downloads and the app wiring use it.
 *
 * A route's call is authorized (the caller identified, its rate counted, its credits held) and
 * comes back as a hold, which the caller of `authorize` ends exactly once: `settle` when the call
 * succeeded (its credits are spent), `release` when it failed or did not run (they go back). How
 * the credits are held is the folder's business: one billing call per call (meter.ts), batched
 * (authorize-queue.ts), a free read answered from the edge's short-lived view of the caller
 * (caller-views.ts), or a busy API-key caller's call paid from a lease billing granted
 * (lease-rules.ts); a success's hold is settled before its answer, batched (settlements.ts). A
 * call priced by its size swaps its hold for one of the sized price once it knows its size.
 */
import type { Logger } from '@webutil/kit';
import type { Context } from 'koa';
import type { BillingClient } from '../billing-client.js';
import type { Caller, Metered } from '../route-spec.js';
import { Meter } from './meter.js';

/** An authorized call. */
export interface Hold {
  /** Who called, and its quota once this call's credits are held. */
  readonly caller: Caller;
  /**
   * The call succeeded: its credits are spent (and X-Credits-Remaining stays as it is), at billing,
   * before the success is answered. `target`, what it worked on (a url or domain), is recorded with
   * it in the account's usage. Rejects with a 503 (its credits returned) when billing says the hold
   * is gone or cannot be reached in time: the success must not be answered then.
   */
  settle(target?: string): Promise<void>;
  /** The call failed or did not run: its credits go back (and X-Credits-Remaining says so). */
  release(): void;
  /**
   * The call's own hold at billing, handed to a job that settles it when it ends (decision 0490):
   * its name, and the hold ends here without being settled. Undefined (nothing handed over) for a
   * hold that is not the call's own at billing (free, sandbox, paid from a lease).
   */
  handOver?(): string | undefined;
  /** The name of the call's own hold at billing, which handOver would hand over; else undefined. */
  readonly ownReservation?: string;
}

export interface Metering {
  /**
   * Authenticates, checks the challenge clearance and the rate, and holds the route's credits;
   * sets X-Credits-Remaining and the RateLimit headers (the caller's request-rate window). A
   * refusal is thrown as its 401/402/403/429.
   */
  authorize(spec: Metered, ctx: Context, requestId: string): Promise<Hold>;
  /**
   * The call, authorized with `hold`, is priced again by its size (a route priced per block, once
   * its input is read): `hold` is released and `credits` held instead, at billing, without counting
   * the request again; the new hold is what the call ends. A refusal (402) is thrown with nothing
   * held any more. A hold that holds nothing (a sandbox key's) stays as it is.
   */
  reprice(hold: Hold, spec: Metered, ctx: Context, requestId: string, credits: number, holdMs?: number): Promise<Hold>;
  /**
   * The caller's credits left, for a response that authorized nothing (unknown route, malformed
   * body); the request counts toward the caller's rate. 0 when the caller is unknown. Sets the
   * RateLimit headers when the caller's window is known.
   */
  peekCredits(ctx: Context): Promise<number>;
  /**
   * Billing says the account (its rate subject) changed: a key revoked, the password set, the plan
   * changed. Its callers' views and credit leases end now.
   */
  revoke(subject: string): void;
  /**
   * On shutdown, once the HTTP server has stopped: ends the leases and sends what is queued, for
   * at most `withinMs`.
   */
  drain(withinMs: number): Promise<void>;
}

export interface MeteringOptions {
  /**
   * How long the edge may answer a caller's free reads from billing's last word, and pay a busy
   * API-key caller's calls from a lease of its credits (0: never).
   */
  callerViewMs: number;
}

export function createMetering(billing: BillingClient, log: Logger, options: MeteringOptions): Metering {
  return new Meter(billing, log, options.callerViewMs);
}
