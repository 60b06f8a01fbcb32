import { solveAltcha } from '@webutil/scripts/altcha';
import { linkIn, readOutbox, waitForMail } from '@webutil/scripts/mail-under-test';
import type { ApiInit, TestStack } from '@webutil/scripts/test-stack';
import { expect } from 'chai';

export interface Envelope {
  success: boolean;
  data?: any;
  error?: { code: string; message: string; creditsRequired?: number };
}

export async function json(res: Response): Promise<Envelope> {
  expect(res.headers.get('content-type')).to.match(/application\/json/);
  return (await res.json()) as Envelope;
}

/** The X-Credits-Remaining header as a number (every response has one). */
export function creditsHeader(res: Response): number {
  const value = res.headers.get('x-credits-remaining');
  expect(value, `X-Credits-Remaining on ${res.status} ${res.url}`).to.match(/^\d+$/);
  return Number(value);
}

export async function expectFailure(res: Response, status: number, code: string): Promise<Envelope> {
  const body = await json(res);
  expect(res.status, JSON.stringify(body)).to.equal(status);
  expect(body.success).to.equal(false);
  expect(body.error?.code).to.equal(code);
  expect(body.error?.message).to.be.a('string').and.not.be.empty;
  return body;
}

/** GET /v1/quota as some caller (the stack's key unless init says otherwise). */
export async function quota(
  stack: TestStack,
  init: ApiInit = {},
): Promise<{ callerKind: string; plan?: string; limit: number; remaining: number }> {
  const res = await stack.api('/v1/quota', init);
  const body = await json(res);
  expect(res.status, JSON.stringify(body)).to.equal(200);
  expect(creditsHeader(res)).to.equal(body.data.remaining);
  return body.data;
}

export { account } from '@webutil/scripts/test-accounts';

/** Polls until `check` passes or the wait runs out (then the last failure is thrown). */
export async function eventually<T>(check: () => Promise<T>, waitMs = 15_000): Promise<T> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    try {
      return await check();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/**
 * Follows the verification link mailed at sign-up to `email`, as its owner would: the test stacks
 * run without SMTP_URL, so billing wrote the mail to its dev outbox (DATA_DIR/mail/).
 */
export async function verifyFromOutbox(stack: TestStack, email: string): Promise<void> {
  const mail = await waitForMail(
    () => readOutbox(stack.dataDir),
    (m) => m.to.includes(email) && linkIn(m, 'verify-email') !== undefined,
  );
  const token = linkIn(mail, 'verify-email')?.searchParams.get('token');
  const res = await stack.api('/v1/auth/verify-email', {
    method: 'POST',
    anonymous: true,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ token }),
  });
  expect(res.status, JSON.stringify(await res.clone().json())).to.equal(200);
}

/**
 * A browser: keeps cookies, sends no API key, and appears to come from `ip` (the test stacks
 * trust 127.0.0.1 as a proxy, so X-Forwarded-For names the client).
 */
export class Browser {
  readonly cookies = new Map<string, string>();
  csrfToken: string | undefined;

  constructor(
    private readonly stack: TestStack,
    readonly ip?: string,
  ) {}

  async fetch(path: string, init: RequestInit & { csrf?: boolean } = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    if (this.cookies.size) headers.set('cookie', [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; '));
    if (this.ip) headers.set('x-forwarded-for', this.ip);
    if (init.csrf !== false && this.csrfToken) headers.set('x-csrf-token', this.csrfToken);
    if (init.body !== undefined) headers.set('content-type', 'application/json');
    const res = await this.stack.api(path, { ...init, headers, anonymous: true });
    for (const line of res.headers.getSetCookie()) {
      const [pair = '', ...attributes] = line.split(';');
      const [name = '', value = ''] = pair.split('=');
      if (attributes.some((a) => a.trim() === 'Max-Age=0')) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return res;
  }

  post(path: string, body: unknown = {}, init: RequestInit & { csrf?: boolean } = {}): Promise<Response> {
    return this.fetch(path, { ...init, method: 'POST', body: JSON.stringify(body) });
  }

  /** Fetches the proof-of-work challenge and solves it; returns the solution payload (base64). */
  async solve(): Promise<string> {
    const res = await this.fetch('/v1/challenge');
    const body = await json(res);
    expect(res.status, JSON.stringify(body)).to.equal(200);
    expect(body.data.provider).to.equal('altcha');
    const payload = await solveAltcha(body.data.challenge);
    expect(payload, 'the challenge has a solution').to.be.a('string');
    return payload!;
  }

  /** Solves a challenge and submits it: the clearance cookie is set. */
  async passChallenge(): Promise<void> {
    const res = await this.post('/v1/challenge', { payload: await this.solve() });
    expect(res.status, JSON.stringify(await res.clone().json())).to.equal(200);
    expect(this.cookies.has('wu_clearance')).to.equal(true);
  }

  /** Sign-up redeems a freshly solved challenge of its own (a clearance does not buy accounts). */
  async signUp(email: string, password: string): Promise<Response> {
    const res = await this.post('/v1/auth/sign-up', { email, password, payload: await this.solve() });
    if (res.status === 201) this.csrfToken = ((await res.clone().json()) as Envelope).data.csrfToken;
    return res;
  }

  /** Follows the verification link mailed at sign-up to `email` (verifyFromOutbox). */
  verifyEmail(email: string): Promise<void> {
    return verifyFromOutbox(this.stack, email);
  }

  /** `solved`: a challenge payload, which an account with many failed sign-ins asks for. */
  async signIn(email: string, password: string, solved?: string): Promise<Response> {
    const res = await this.post('/v1/auth/sign-in', { email, password, ...(solved ? { payload: solved } : {}) });
    if (res.status === 200) this.csrfToken = ((await res.clone().json()) as Envelope).data.csrfToken;
    return res;
  }
}
