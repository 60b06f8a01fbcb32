/**
 * Calls to the API on this origin (/api/v1): the session cookie rides along, the CSRF token is
 * sent once known, and a missing or stale bot clearance is earned
 * (ALTCHA proof of work) and the call retried once. Sign-up and sign-in take a solved challenge in
 * their body instead (account.ts), so /auth/* calls are never retried with a clearance.
 */
import { solveChallenge } from 'altcha-lib';

export const API = '/api/v1';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** Retry-After of a 429 or 503, in seconds. */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
  }
}

let csrfToken: string | undefined;
export const setCsrfToken = (token: string | undefined) => {
  csrfToken = token;
};

const CHALLENGE_CODES = new Set(['challenge_required', 'challenge_expired', 'challenge_failed']);
/** The clearance cookie is HttpOnly: its expiry is kept beside it, shared by every tab of the site. */
const CLEARANCE_KEY = 'wu-clearance-until';

async function send(method: string, path: string, body?: unknown): Promise<Response> {
  const headers: Record<string, string> = {};
  if (csrfToken) headers['x-csrf-token'] = csrfToken;
  let payload: BodyInit | undefined;
  if (body instanceof FormData) payload = body;
  else if (body !== undefined) {
    headers['content-type'] = 'application/json';
    payload = JSON.stringify(body);
  }
  return fetch(`${API}${path}`, { method, headers, body: payload, credentials: 'same-origin' });
}

async function unwrap<T>(res: Response): Promise<T> {
  const body = (await res.json().catch(() => undefined)) as
    | { success: boolean; data?: T; error?: { code: string; message: string } }
    | undefined;
  if (!body) throw new ApiError(res.status, 'bad_response', `the server answered ${res.status} without JSON`);
  if (body.success === false || !res.ok) {
    const retryAfter = Number(res.headers.get('retry-after') ?? Number.NaN);
    throw new ApiError(
      res.status,
      body.error?.code ?? 'error',
      body.error?.message ?? `HTTP ${res.status}`,
      Number.isFinite(retryAfter) ? retryAfter : undefined,
    );
  }
  // Rendering and XBEL routes answer with their fields at the top level.
  return (body.data ?? body) as T;
}

/** A call; browser callers earn a clearance first when the route asks for one. */
export async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
  const res = await send(method, path, body);
  if (res.status === 401 && !path.startsWith('/auth/')) {
    const failure = await res
      .clone()
      .json()
      .catch(() => undefined);
    if (CHALLENGE_CODES.has(failure?.error?.code)) {
      localStorage.removeItem(CLEARANCE_KEY);
      await ensureClearance();
      return unwrap<T>(await send(method, path, body));
    }
  }
  return unwrap<T>(res);
}

function status(text: string): void {
  const el = document.getElementById('challenge-status');
  if (el) el.textContent = text;
}

/** What POST /challenge and sign-up take: a solved ALTCHA payload or a Turnstile token. */
export type Solution = { payload: string } | { turnstileToken: string };

/**
 * A freshly solved challenge: the ALTCHA proof of work (the payload the ALTCHA widget would
 * submit), or, when the server uses Cloudflare Turnstile, the token of its widget.
 */
export async function solvedChallenge(): Promise<Solution> {
  const challenge = await unwrap<
    | {
        provider: 'altcha';
        challenge: { algorithm: string; challenge: string; maxnumber: number; salt: string; signature: string };
      }
    | { provider: 'turnstile'; siteKey: string }
  >(await send('GET', '/challenge'));
  if (challenge.provider === 'turnstile') return { turnstileToken: await turnstileToken(challenge.siteKey) };
  const { algorithm, challenge: hash, maxnumber, salt, signature } = challenge.challenge;
  status('Checking that you are a person (a few seconds of work in your browser)…');
  const solution = await solveChallenge(hash, salt, algorithm, maxnumber).promise;
  if (!solution) throw new ApiError(401, 'challenge_failed', 'the challenge could not be solved; try again');
  return { payload: btoa(JSON.stringify({ algorithm, challenge: hash, number: solution.number, salt, signature })) };
}

interface TurnstileApi {
  render(
    container: HTMLElement,
    options: { sitekey: string; callback: (token: string) => void; 'error-callback': () => void },
  ): string;
  remove(widgetId: string): void;
}

const TURNSTILE_SCRIPT = 'https://challenges.cloudflare.com/turnstile/v0/api.js?render=explicit';
let turnstileLoaded: Promise<TurnstileApi> | undefined;

/** Cloudflare's widget script, loaded once and only on servers that use Turnstile. */
function loadTurnstile(): Promise<TurnstileApi> {
  turnstileLoaded ??= new Promise((resolve, reject) => {
    const script = document.createElement('script');
    script.src = TURNSTILE_SCRIPT;
    script.async = true;
    script.onload = () => {
      const api = (window as unknown as { turnstile?: TurnstileApi }).turnstile;
      if (api) resolve(api);
      else reject(new ApiError(503, 'challenge_unavailable', 'the Turnstile widget did not start'));
    };
    script.onerror = () => {
      turnstileLoaded = undefined;
      reject(new ApiError(503, 'challenge_unavailable', 'the Turnstile widget could not be loaded'));
    };
    document.head.append(script);
  });
  return turnstileLoaded;
}

/** Shows the Turnstile widget under the challenge status until it gives a token. */
async function turnstileToken(siteKey: string): Promise<string> {
  const api = await loadTurnstile();
  status('Please confirm you are a person.');
  let box = document.getElementById('challenge-widget');
  if (!box) {
    box = document.createElement('div');
    box.id = 'challenge-widget';
    (document.getElementById('challenge-status') ?? document.body).after(box);
  }
  const container = box;
  return new Promise((resolve, reject) => {
    const id = api.render(container, {
      sitekey: siteKey,
      callback: (token) => {
        api.remove(id);
        resolve(token);
      },
      'error-callback': () => {
        api.remove(id);
        reject(new ApiError(401, 'challenge_failed', 'the Turnstile check failed; try again'));
      },
    });
  });
}

/** Earns the wu_clearance cookie unless the one we hold is still valid (then nothing shows). */
export async function ensureClearance(): Promise<void> {
  if (Number(localStorage.getItem(CLEARANCE_KEY)) > Date.now()) return;
  const cleared = await unwrap<{ maxAgeSeconds: number }>(await send('POST', '/challenge', await solvedChallenge()));
  // Renewed a minute early so a call never races the cookie's expiry.
  localStorage.setItem(CLEARANCE_KEY, String(Date.now() + (cleared.maxAgeSeconds - 60) * 1000));
  status('Challenge passed.');
}

export interface Account {
  email: string;
  plan: string;
  createdAt: string;
  cycleEnds: string;
  topUpCredits: number;
  /** false until the address is verified (decision 0422); absent from older services. */
  emailVerified?: boolean;
  /** The plan's monthly price where it is sold by card (smallest unit of `currency`); absent otherwise. */
  planPrice?: number;
  currency?: string;
  /** Until when a subscription holds the plan (its period's end, plus the grace while unpaid). */
  paidThrough?: string;
  /** false when the subscription ends at cycleEnds instead of renewing. */
  renews?: boolean;
}

/** The signed-in account, or undefined when signed out (other failures throw); keeps the CSRF token. */
export async function currentAccount(): Promise<Account | undefined> {
  const res = await send('GET', '/auth/me');
  if (res.status === 401) return undefined;
  const session = await unwrap<{ account: Account; csrfToken: string }>(res);
  setCsrfToken(session.csrfToken);
  return session.account;
}

export interface Quota {
  callerKind: 'anonymous' | 'session' | 'apikey';
  plan?: string;
  limit: number;
  remaining: number;
}

/**
 * The caller's quota, shown in the header: the only source of the counter (an error's
 * X-Credits-Remaining may speak of no caller at all). On failure the counter keeps its value.
 */
export async function refreshCredits(): Promise<Quota | undefined> {
  try {
    const quota = await unwrap<Quota>(await send('GET', '/quota'));
    const target = document.getElementById('credits');
    if (target) target.textContent = String(quota.remaining);
    return quota;
  } catch {
    return undefined;
  }
}
