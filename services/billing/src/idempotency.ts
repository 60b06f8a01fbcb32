import {
  type ClaimIdempotencyKeyRequest,
  type ClaimIdempotencyKeyResponse,
  type EndIdempotencyKeyRequest,
  IdempotencyState,
} from '@webutil/proto/webutil/billing/v1/billing';
import type { Clock } from './clock.js';
import type { BillingStore } from './stores/store.js';

/** How long a succeeded call's answer is replayed to retries with its Idempotency-Key. */
export const IDEMPOTENT_ANSWER_MS = 24 * 3_600_000;
/** A running claim outlives its call's deadline by this much before it frees the key. */
const RUNNING_GRACE_MS = 30_000;

/**
 * Idempotency-Key claims, per caller (its rate subject): one call runs per key; a retry with the
 * same request gets the first answer, a retry with another request is told so.
 */
export class IdempotencyKeys {
  constructor(
    private readonly store: BillingStore,
    private readonly clock: Clock,
  ) {}

  async claim({
    subject,
    key,
    fingerprint,
    runningMs,
  }: ClaimIdempotencyKeyRequest): Promise<ClaimIdempotencyKeyResponse> {
    const now = this.clock();
    const held = await this.store.claimIdempotency(
      { id: recordId(subject, key), fingerprint, expiresAt: now + Math.max(0, runningMs) + RUNNING_GRACE_MS },
      now,
    );
    if (!held) return { state: IdempotencyState.IDEMPOTENCY_STATE_CLAIMED };
    if (held.fingerprint !== fingerprint) return { state: IdempotencyState.IDEMPOTENCY_STATE_MISMATCH };
    if (!held.answer) return { state: IdempotencyState.IDEMPOTENCY_STATE_RUNNING };
    return { state: IdempotencyState.IDEMPOTENCY_STATE_REPLAY, answer: held.answer };
  }

  async end({ subject, key, fingerprint, answer }: EndIdempotencyKeyRequest): Promise<void> {
    const id = recordId(subject, key);
    if (answer) await this.store.completeIdempotency(id, fingerprint, answer, this.clock() + IDEMPOTENT_ANSWER_MS);
    else await this.store.releaseIdempotency(id, fingerprint);
  }
}

/** Subjects contain no newline; keys are printable ASCII (the edge checks). */
const recordId = (subject: string, key: string) => `${subject}\n${key}`;
