import { createHash, type Hash } from 'node:crypto';
import { type ClaimIdempotencyKeyResponse, IdempotencyState } from '@webutil/proto/webutil/billing/v1/billing';
import type { Context } from 'koa';
import { type BillingClient, billingCall } from './billing-client.js';
import { HttpError } from './envelope.js';
import type { Caller, RouteSpec } from './route-spec.js';

export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';
export const IDEMPOTENT_REPLAYED_HEADER = 'Idempotent-Replayed';
/** The longest key taken (as Stripe's and the IETF draft's examples: a UUID fits many times over). */
export const IDEMPOTENCY_KEY_MAX = 255;
/** A first answer larger than this is not kept: a retry is told the key was used, not replayed. */
const ANSWER_MAX_BYTES = 1024 * 1024;
const PRINTABLE = /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/;

/** Credit-spending POSTs take an Idempotency-Key. */
export const takesIdempotencyKey = (spec: Pick<RouteSpec, 'method' | 'credits'>) =>
  spec.method === 'POST' && spec.credits > 0;

/** The request's Idempotency-Key, checked before anything is held; undefined when absent. */
export function idempotencyKeyOf(ctx: Context): string | undefined {
  const key = ctx.get(IDEMPOTENCY_KEY_HEADER);
  if (key === '') return undefined;
  if (key.length > IDEMPOTENCY_KEY_MAX || !PRINTABLE.test(key))
    throw new HttpError(
      400,
      'invalid_idempotency_key',
      `Idempotency-Key must be 1 to ${IDEMPOTENCY_KEY_MAX} printable ASCII characters`,
    );
  return key;
}

/** SHA-256 of the route and its parsed input (an upload's bytes included), key order aside. */
export function requestFingerprint(operation: string, input: unknown): string {
  const hash = createHash('sha256').update(operation).update('\0');
  feed(hash, input);
  return hash.digest('hex');
}

function feed(hash: Hash, value: unknown): void {
  if (value instanceof Uint8Array) {
    hash.update(`b${value.byteLength}:`).update(value);
  } else if (Array.isArray(value)) {
    hash.update(`a${value.length}[`);
    for (const item of value) feed(hash, item);
    hash.update(']');
  } else if (value !== null && typeof value === 'object') {
    const keys = Object.keys(value).sort();
    hash.update(`o${keys.length}{`);
    for (const key of keys) {
      hash.update(JSON.stringify(key));
      feed(hash, (value as Record<string, unknown>)[key]);
    }
    hash.update('}');
  } else {
    hash.update(value === undefined ? 'u' : `v${JSON.stringify(value)}`);
  }
}

/** A key this call claimed; ended once, with the call's answer or without one. */
export interface IdempotencyClaim {
  /** The call succeeded: its answer is kept for 24 h. */
  keep(status: number, body: object, headers: Record<string, string> | undefined): Promise<void>;
  /** The call failed (nothing spent): the key is free for a retry. */
  free(): void;
}

/** What the first call with the key says to this one. */
export type IdempotencyOutcome =
  | { claim: IdempotencyClaim }
  | { replay: { status: number; body: string; headers: Record<string, string> } };

/**
 * Where a caller's Idempotency-Keys live (decision 0284): an account's keys are one space (its rate
 * subject, every key and session of it). An anonymous caller's rate subject is its client network,
 * which strangers behind one NAT address or in one IPv6 /64 share; its keys live in the space of its
 * challenge clearance within that network instead (every anonymous credit-spending call carries one,
 * 15 minutes by default), so a neighbour can neither replay its answers nor block its keys.
 */
export function idempotencySpace(caller: Pick<Caller, 'rate' | 'credential'>): string | undefined {
  const subject = caller.rate?.key;
  if (!subject?.startsWith('ip:')) return subject;
  const clearance = caller.credential.clearance ?? '';
  return `${subject}|clearance:${createHash('sha256').update(clearance).digest('base64url')}`;
}

/**
 * Claims the caller's key for this call (billing keeps it, per caller); a retry of a call still
 * running is 409, the key sent with another request 422, and a retry of a call that succeeded
 * gets its answer back.
 */
export async function claimIdempotencyKey(
  billing: BillingClient,
  caller: Caller,
  key: string,
  fingerprint: string,
  spec: Pick<RouteSpec, 'timeoutMs'>,
  requestId: string,
): Promise<IdempotencyOutcome> {
  const subject = idempotencySpace(caller);
  if (!subject) throw new HttpError(500, 'internal_error', 'internal error');
  const claimed: ClaimIdempotencyKeyResponse = await billing.claimIdempotencyKey(
    { subject, key, fingerprint, runningMs: spec.timeoutMs },
    billingCall(requestId),
  );
  switch (claimed.state) {
    case IdempotencyState.IDEMPOTENCY_STATE_CLAIMED: {
      const end = (answer?: { status: number; body: string; headers: string }) =>
        billing.endIdempotencyKey({ subject, key, fingerprint, answer }, billingCall(requestId));
      return {
        claim: {
          keep: async (status, body, headers) => {
            const text = JSON.stringify(body);
            // Too large to keep: the key stays used (the call was paid for), with no answer to replay.
            const kept = Buffer.byteLength(text) <= ANSWER_MAX_BYTES ? text : '';
            await end({ status, body: kept, headers: JSON.stringify(headers ?? {}) });
          },
          free: () => void end().catch(() => undefined),
        },
      };
    }
    case IdempotencyState.IDEMPOTENCY_STATE_REPLAY: {
      const answer = claimed.answer;
      if (!answer?.body)
        throw new HttpError(
          409,
          'idempotency_key_used',
          'a call with this Idempotency-Key succeeded; its answer (over 1 MB) is not kept for replay',
        );
      return {
        replay: { status: answer.status, body: answer.body, headers: JSON.parse(answer.headers || '{}') },
      };
    }
    case IdempotencyState.IDEMPOTENCY_STATE_MISMATCH:
      throw new HttpError(
        422,
        'idempotency_key_mismatch',
        'this Idempotency-Key was first sent with another request; use a new key for a new request',
      );
    default:
      throw new HttpError(
        409,
        'idempotency_key_in_use',
        'a call with this Idempotency-Key is still running; retry once it has answered',
        undefined,
        { 'Retry-After': '1' },
      );
  }
}
