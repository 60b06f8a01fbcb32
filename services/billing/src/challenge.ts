import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { Logger } from '@webutil/kit';
import { unauthenticated as unauthenticatedError, unavailable } from '@webutil/kit';
import type {
  ChallengeSolution,
  CreateChallengeResponse,
  Denial,
  SolveChallengeRequest,
  SolveChallengeResponse,
} from '@webutil/proto/webutil/billing/v1/billing';
import { createChallenge, extractParams, verifySolution } from 'altcha-lib';
import type { Payload } from 'altcha-lib/types';
import type { Clock } from './clock.js';
import { unauthenticated } from './denials.js';
import type { BillingStore } from './stores/store.js';

export interface TurnstileConfig {
  secret: string;
  siteKey: string;
  /** Cloudflare's siteverify endpoint (tests point it at a local stand-in). */
  verifyUrl: string;
}

export interface ChallengeConfig {
  /** Signs ALTCHA challenges and clearances (separate keys are derived from it). */
  secret: string;
  /** Proof-of-work difficulty: the solver tries up to this many numbers (half on average). */
  maxNumber: number;
  /** How long a challenge may take to be solved. */
  challengeTtlMs: number;
  /** How long a clearance lets a browser caller use metered routes. */
  clearanceTtlMs: number;
  /** When set, Cloudflare Turnstile replaces the self-hosted proof of work. */
  turnstile?: TurnstileConfig;
}

const ALGORITHM = 'SHA-256';

/**
 * The bot challenge for browser callers. The self-hosted default is an ALTCHA proof of work
 * (HMAC-signed, no outside service); with a Turnstile secret, Cloudflare's token is verified
 * instead. Either way a solution is accepted once and buys a clearance: a short-lived token,
 * HMAC-signed and bound to the client IP, that the edge keeps in a cookie.
 */
export class Challenges {
  private readonly altchaKey: string;
  private readonly clearanceKey: Buffer;

  constructor(
    private readonly config: ChallengeConfig,
    private readonly store: BillingStore,
    private readonly clock: Clock,
    private readonly log: Logger,
  ) {
    this.altchaKey = createHmac('sha256', config.secret).update('altcha').digest('hex');
    this.clearanceKey = createHmac('sha256', config.secret).update('clearance').digest();
  }

  async create(): Promise<CreateChallengeResponse> {
    if (this.config.turnstile)
      return { challenge: { $case: 'turnstile', turnstile: { siteKey: this.config.turnstile.siteKey } } };
    const challenge = await createChallenge({
      algorithm: ALGORITHM,
      hmacKey: this.altchaKey,
      maxnumber: this.config.maxNumber,
      expires: new Date(this.clock() + this.config.challengeTtlMs),
    });
    return {
      challenge: {
        $case: 'altcha',
        altcha: {
          algorithm: challenge.algorithm,
          challenge: challenge.challenge,
          maxNumber: this.config.maxNumber,
          salt: challenge.salt,
          signature: challenge.signature,
        },
      },
    };
  }

  /** Verifies a solution (once) and returns a clearance; a failure is UNAUTHENTICATED. */
  async solve(request: SolveChallengeRequest): Promise<SolveChallengeResponse> {
    const denial = await this.redeem(request.solution, request.clientIp);
    if (denial) throw unauthenticatedError(denial.reason, denial.message);
    const expiresAt = this.clock() + this.config.clearanceTtlMs;
    return {
      clearance: `${expiresAt}.${this.sign(expiresAt, request.clientIp)}`,
      maxAgeSeconds: Math.floor(this.config.clearanceTtlMs / 1000),
    };
  }

  /**
   * Accepts a solution once: undefined when it is valid and was not used before, else why not.
   * Sign-up and a throttled sign-in redeem one per request instead of reading the clearance.
   */
  async redeem(solution: ChallengeSolution | undefined, clientIp: string): Promise<Denial | undefined> {
    const kind = solution?.kind;
    if (kind?.$case === 'altchaPayload') return this.redeemAltcha(kind.altchaPayload);
    if (kind?.$case === 'turnstileToken') return this.redeemTurnstile(kind.turnstileToken, clientIp);
    return unauthenticated(
      'CHALLENGE_REQUIRED',
      'solve a bot challenge (GET /v1/challenge) and send its payload (or turnstileToken) with this request',
    );
  }

  /** Undefined when the clearance is valid for this IP now, else why not. */
  checkClearance(clearance: string | undefined, clientIp: string): Denial | undefined {
    if (!clearance)
      return unauthenticated(
        'CHALLENGE_REQUIRED',
        'complete the bot challenge first (GET then POST /v1/challenge), or use an API key',
      );
    const [expires, signature] = clearance.split('.');
    const expiresAt = Number(expires);
    const expected = Buffer.from(Number.isSafeInteger(expiresAt) ? this.sign(expiresAt, clientIp) : '', 'base64url');
    const given = Buffer.from(signature ?? '', 'base64url');
    if (expected.length === 0 || given.length !== expected.length || !timingSafeEqual(given, expected)) {
      return unauthenticated(
        'CHALLENGE_FAILED',
        'the challenge clearance is not valid; complete the bot challenge again',
      );
    }
    if (expiresAt <= this.clock())
      return unauthenticated(
        'CHALLENGE_EXPIRED',
        'the challenge clearance has expired; complete the bot challenge again',
      );
    return undefined;
  }

  private sign(expiresAt: number, clientIp: string): string {
    return createHmac('sha256', this.clearanceKey).update(`${expiresAt}|${clientIp}`).digest('base64url');
  }

  private async redeemAltcha(encoded: string): Promise<Denial | undefined> {
    if (this.config.turnstile) return failed('this server uses Turnstile; submit turnstileToken');
    const payload = decodePayload(encoded);
    const valid = payload !== undefined && (await verifySolution(payload, this.altchaKey, false).catch(() => false));
    if (!payload || !valid) return failed('the challenge solution is not valid');
    const expiresAt = Number(extractParams(payload).expires) * 1000;
    if (!(expiresAt > this.clock())) return failed('the challenge has expired; fetch a new one');
    return this.spendOnce(`altcha:${payload.signature}`, expiresAt);
  }

  private async redeemTurnstile(token: string, clientIp: string): Promise<Denial | undefined> {
    const turnstile = this.config.turnstile;
    if (!turnstile) return failed('Turnstile is not configured; solve the proof-of-work challenge');
    if (!token || token.length > 4096) return failed('the Turnstile token is not valid');
    let outcome: { success?: boolean; 'error-codes'?: string[] };
    try {
      const res = await fetch(turnstile.verifyUrl, {
        method: 'POST',
        body: new URLSearchParams({ secret: turnstile.secret, response: token, remoteip: clientIp }),
        signal: AbortSignal.timeout(5_000),
      });
      outcome = (await res.json()) as typeof outcome;
    } catch (err) {
      this.log.warn({ err }, 'Turnstile siteverify unreachable');
      throw unavailable('CHALLENGE_UNAVAILABLE', 'the challenge provider could not be reached; try again shortly');
    }
    if (outcome.success !== true) {
      return failed(
        `the Turnstile token was refused (${(outcome['error-codes'] ?? []).join(', ') || 'no reason given'})`,
      );
    }
    // Cloudflare refuses a second use itself; counting it here too keeps replay closed whatever
    // the verifier does. Turnstile tokens live 300 s.
    return this.spendOnce(`turnstile:${createHash('sha256').update(token).digest('hex')}`, this.clock() + 300_000);
  }

  private async spendOnce(key: string, expiresAt: number): Promise<Denial | undefined> {
    if ((await this.store.increment(`spent|${key}`, 1, expiresAt + 60_000)) === 1) return undefined;
    return failed('this challenge solution was already used; fetch a new challenge');
  }
}

const failed = (message: string): Denial => unauthenticated('CHALLENGE_FAILED', message);

/** The widget's base64 JSON payload, checked for shape before any hashing. */
function decodePayload(encoded: string): Payload | undefined {
  try {
    const value = JSON.parse(Buffer.from(encoded, 'base64').toString('utf8')) as Partial<Payload>;
    const ok =
      value.algorithm === ALGORITHM &&
      typeof value.challenge === 'string' &&
      typeof value.salt === 'string' &&
      typeof value.signature === 'string' &&
      Number.isSafeInteger(value.number);
    return ok ? (value as Payload) : undefined;
  } catch {
    return undefined;
  }
}
