import { readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { startTestStack, type TestStack } from '@webutil/scripts/test-stack';
import { bookmark, largeXbel, xbelOf } from '@webutil/scripts/xbel-fixtures';
import { expect } from 'chai';
import { account, creditsHeader, eventually, quota } from './billing-helpers.js';
import { stalledUpload } from './stalled-upload.js';

const MIB = 1024 * 1024;
const BOUNDARY = 'upload-admission-boundary';

interface RawOptions {
  /** Extra header lines, e.g. `Authorization: Bearer …`. */
  headers?: string[];
  /** File bytes in the form (spaces); the form's framing comes around them. */
  fileBytes: number;
  /** Send `Expect: 100-continue`. */
  expectContinue?: boolean;
  /** Without a Content-Length the body is sent chunked. */
  chunked?: boolean;
  /**
   * at-once: the body follows the headers without waiting (a client that does not wait for
   * `100 Continue`, or gave up waiting); on-continue: only once asked; never: headers only.
   */
  send: 'at-once' | 'on-continue' | 'never';
  /** The client's address (127.0.0.0/8): anonymous callers are rate-limited per address. */
  localAddress?: string;
}

/** What a raw HTTP/1.1 client saw: the final answer, whether it was asked to continue, any socket error. */
interface RawResult {
  status: number;
  headers: Record<string, string>;
  body: { success: boolean; error?: { code: string; message: string } } | undefined;
  continued: boolean;
  /** A socket error (EPIPE, ECONNRESET) seen before the whole answer was read, or after. */
  errorBeforeAnswer?: string;
  errorAfterAnswer?: string;
  /** Milliseconds from connecting to the whole answer. */
  ms: number;
}

/**
 * An upload over node:net: headers, then the multipart body in 64 KiB writes (respecting
 * back-pressure), reading whatever the edge answers meanwhile. Resolves when the edge closed the
 * connection or 10 s after the answer (a liveness bound), rejects when no answer came in 20 s.
 */
function rawUpload(port: number, route: string, options: RawOptions): Promise<RawResult> {
  const head =
    `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="big.xbel"\r\n` +
    'Content-Type: application/octet-stream\r\n\r\n';
  const tail = `\r\n--${BOUNDARY}--\r\n`;
  const length = Buffer.byteLength(head) + options.fileBytes + Buffer.byteLength(tail);
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: '127.0.0.1', port, localAddress: options.localAddress });
    let received = Buffer.alloc(0);
    let continued = false;
    let answer: Omit<RawResult, 'continued' | 'ms'> | undefined;
    let answeredAt = 0;
    let errorBeforeAnswer: string | undefined;
    let errorAfterAnswer: string | undefined;
    let sending = false;
    const finish = () => {
      clearTimeout(noAnswer);
      if (!answer) reject(new Error(`no answer; socket error: ${errorBeforeAnswer}; read: ${received.toString()}`));
      else resolve({ ...answer, continued, errorBeforeAnswer, errorAfterAnswer, ms: answeredAt - started });
    };
    const noAnswer = setTimeout(() => socket.destroy(), 20_000);
    socket.on('error', (err: NodeJS.ErrnoException) => {
      if (answer) errorAfterAnswer ??= err.code;
      else errorBeforeAnswer ??= err.code;
    });
    socket.on('close', finish);
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      for (;;) {
        const end = received.indexOf('\r\n\r\n');
        if (end < 0 || answer) return;
        const [statusLine = '', ...lines] = received.subarray(0, end).toString('latin1').split('\r\n');
        const status = Number(statusLine.split(' ')[1]);
        if (status === 100) {
          continued = true;
          received = received.subarray(end + 4);
          if (options.send === 'on-continue') sendBody();
          continue;
        }
        const headers = Object.fromEntries(
          lines.map((line) => [
            line.slice(0, line.indexOf(':')).toLowerCase(),
            line.slice(line.indexOf(':') + 1).trim(),
          ]),
        );
        const bodyLength = Number(headers['content-length'] ?? 0);
        if (received.length < end + 4 + bodyLength) return;
        const text = received.subarray(end + 4, end + 4 + bodyLength).toString('utf8');
        answer = { status, headers, body: text ? JSON.parse(text) : undefined };
        answeredAt = Date.now();
        // The answer is read: the client is done once it has sent what it meant to (or the edge closes).
        setTimeout(() => socket.destroy(), 10_000).unref();
        if (options.send !== 'at-once' || !sending) socket.end();
      }
    });
    const sendBody = () => {
      if (sending) return;
      sending = true;
      const chunk = Buffer.alloc(64 * 1024, 0x20);
      const parts: Buffer[] = [Buffer.from(head)];
      let left = options.fileBytes;
      const frame = (bytes: Buffer) =>
        options.chunked ? [Buffer.from(`${bytes.length.toString(16)}\r\n`), bytes, Buffer.from('\r\n')] : [bytes];
      const pump = () => {
        while (!socket.destroyed) {
          let next: Buffer | undefined = parts.shift();
          if (!next && left > 0) {
            next = left >= chunk.length ? chunk : chunk.subarray(0, left);
            left -= next.length;
            if (left === 0) parts.push(Buffer.from(tail));
          }
          if (!next) {
            if (options.chunked) socket.write('0\r\n\r\n');
            if (answer) socket.end();
            return;
          }
          let drained = true;
          for (const piece of frame(next)) drained = socket.write(piece) && drained;
          if (!drained) {
            socket.once('drain', pump);
            return;
          }
        }
      };
      pump();
    };
    socket.write(
      [
        `POST /v1/${route} HTTP/1.1`,
        'Host: edge',
        `Content-Type: multipart/form-data; boundary=${BOUNDARY}`,
        options.chunked ? 'Transfer-Encoding: chunked' : `Content-Length: ${length}`,
        ...(options.expectContinue ? ['Expect: 100-continue'] : []),
        ...(options.headers ?? []),
        '',
        '',
      ].join('\r\n'),
    );
    if (options.send === 'at-once') sendBody();
  });
}

/**
 * Uploads are judged by their headers before a byte of the body is read (who the caller is and
 * whether it may pay, the declared size, the uploads it has in flight), a refused one is answered
 * and closed gracefully so that the client reads the answer, and refusing a burst costs the edge
 * little memory.
 */
describe('edge: uploads are admitted from their headers', function () {
  this.timeout(180_000);
  let stack: TestStack;
  let port: number;

  before(async () => {
    stack = await startTestStack();
    port = Number(new URL(stack.edgeUrl).port);
  });
  after(async () => stack?.stop());

  const bearer = (key: string) => [`Authorization: Bearer ${key}`];

  it('refuses a caller without a credential (401) before the body is sent, and never asks for it', async () => {
    for (const expectContinue of [false, true]) {
      const result = await rawUpload(port, 'xbel-to-html', {
        fileBytes: 9 * MIB,
        expectContinue,
        send: 'never',
        localAddress: '127.0.0.21',
      });
      expect(result.status, JSON.stringify(result.body)).to.equal(401);
      expect(result.body?.error?.code).to.equal('challenge_required');
      expect(result.continued, 'asked for the body of a refused upload').to.equal(false);
      expect(result.headers.connection).to.equal('close');
    }
  });

  it('refuses a key without credits (402) from the headers, and spends nothing', async () => {
    const { apiKey } = await account(stack, 'STARTER', '--credits', '0');
    const result = await rawUpload(port, 'xbel-decrypt', {
      headers: bearer(apiKey),
      fileBytes: 9 * MIB,
      expectContinue: true,
      send: 'never',
    });
    expect(result.status, JSON.stringify(result.body)).to.equal(402);
    expect(result.body?.error?.code).to.equal('insufficient_credits');
    expect(result.continued).to.equal(false);
  });

  it('refuses a declared length over the limit (413) before 100 Continue, for any caller', async () => {
    for (const headers of [bearer(stack.apiKey), []]) {
      const result = await rawUpload(port, 'xbel-to-html', {
        headers,
        fileBytes: 11 * MIB,
        expectContinue: true,
        send: 'never',
        localAddress: '127.0.0.22',
      });
      expect(result.status, JSON.stringify(result.body)).to.equal(413);
      expect(result.body?.error?.code).to.equal('payload_too_large');
      expect(result.continued).to.equal(false);
    }
  });

  it('asks an allowed caller for its body with 100 Continue, and converts it', async () => {
    const before = (await quota(stack)).remaining;
    const xbel = xbelOf([bookmark('https://example.com/', 'x')]);
    const head =
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="b.xbel"\r\n` +
      `Content-Type: application/octet-stream\r\n\r\n${xbel}\r\n--${BOUNDARY}--\r\n`;
    const socket = net.connect({ host: '127.0.0.1', port });
    let text = '';
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString();
      // Not end(): a client that half-closes has left, as far as the edge can tell.
      if (text === 'HTTP/1.1 100 Continue\r\n\r\n') socket.write(head);
    });
    const closed = new Promise((resolve) => socket.once('close', resolve));
    socket.write(
      `POST /v1/xbel-to-html HTTP/1.1\r\nHost: edge\r\nAuthorization: Bearer ${stack.apiKey}\r\n` +
        `Content-Type: multipart/form-data; boundary=${BOUNDARY}\r\nContent-Length: ${Buffer.byteLength(head)}\r\n` +
        'Expect: 100-continue\r\nConnection: close\r\n\r\n',
    );
    await closed;
    expect(text.startsWith('HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n'), text).to.equal(true);
    expect(JSON.parse(text.slice(text.indexOf('\r\n\r\n', 30) + 4))).to.include({ success: true });
    expect((await quota(stack)).remaining).to.equal(before - 1);
  });

  it('reads a chunked upload (no declared length) whole, byte for byte, into its growing buffer', async () => {
    const { text } = largeXbel(3 * MIB);
    const form = new FormData();
    form.set('file', new Blob([text]), 'big.xbel');
    form.set('key', 'k');
    const encoded = new Response(form);
    const res = await stack.api('/v1/xbel-decrypt', {
      method: 'POST',
      body: encoded.body,
      headers: { 'content-type': encoded.headers.get('content-type') ?? '' },
      duplex: 'half',
    } as RequestInit);
    const body = (await res.json()) as { downloadUrl: string };
    expect(res.status, JSON.stringify(body)).to.equal(200);
    // A plain file comes back unchanged: what the edge assembled is what was sent.
    const stored = await stack.api(new URL(body.downloadUrl).pathname, { anonymous: true });
    expect(await stored.text()).to.equal(text);
  });

  it('holds at most 2 uploads in flight per client: the third is 429 too_many_uploads, nothing spent', async () => {
    const { apiKey } = await account(stack, 'STARTER', '--credits', '10');
    const logsFrom = stack.logs.length;
    // Two uploads whose bodies stall half-way hold the client's two places.
    const stalled = [1, 2].map(() => stalledUpload(port, apiKey));
    await new Promise((resolve) => setTimeout(resolve, 500));
    const third = await rawUpload(port, 'xbel-to-html', { headers: bearer(apiKey), fileBytes: MIB, send: 'never' });
    expect(third.status, JSON.stringify(third.body)).to.equal(429);
    expect(third.body?.error?.code).to.equal('too_many_uploads');
    expect(third.body?.error?.message).to.match(/2 uploads in flight/);
    expect(Number(third.headers['retry-after'])).to.be.greaterThan(0);
    for (const socket of stalled) socket.destroy();
    // The places are given back when their requests end; nothing was spent by any of it.
    const xbel = xbelOf([bookmark('https://example.com/', 'x')]);
    let status = 0;
    // Each attempt's status, error code and X-Credits-Remaining: what a failure below is to be read with.
    const attempts: string[] = [];
    for (let attempt = 0; attempt < 50 && status !== 200; attempt++) {
      const form = new FormData();
      form.set('file', new Blob([xbel]), 'b.xbel');
      const res = await stack.api('/v1/xbel-to-html', { method: 'POST', body: form, apiKey });
      status = res.status;
      const code = status === 200 ? '' : ((await res.json()) as { error?: { code?: string } }).error?.code;
      if (status === 200) await res.arrayBuffer();
      attempts.push(`${status} ${code ?? ''} ${res.headers.get('x-credits-remaining')}`.replace(/ +/g, ' '));
      if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(status, attempts.join('; ')).to.equal(200);
    // Read 8 now and then before decision 0361 (the second upload's refund, given back while this
    // call waited for the first's, was not waited for; the next test forces it): a failure carries
    // the calls the edge and billing logged meanwhile.
    const left = (await quota(stack, { apiKey })).remaining;
    const calls = () =>
      stack.logs
        .slice(logsFrom)
        .filter((line) =>
          /"(rpc|path)":"(Authorize|AuthorizeBatch|Settle|\/v1\/xbel-to-html)"|"level":[456]0/.test(line),
        );
    expect(left, left === 9 ? '' : `attempts: ${attempts.join('; ')}; meanwhile:\n${calls().join('\n')}`).to.equal(9);
  });

  it('a refund given back while the next call waits for an earlier one is waited for too (the "8 for 9")', async () => {
    const { apiKey } = await account(stack, 'STARTER', '--credits', '10', '--rate-limit', '100000');
    const billing = stack.pid('billing');
    if (billing === undefined) throw new Error('the stack has no billing process');
    const [first, second] = [1, 2].map(() => stalledUpload(port, apiKey));
    await eventually(async () => expect((await quota(stack, { apiKey })).remaining).to.equal(8), 10_000);
    const pause = () => new Promise((resolve) => setTimeout(resolve, 150));
    const form = new FormData();
    form.set('file', new Blob([xbelOf([bookmark('https://example.com/', 'x')])]), 'b.xbel');
    let call: Promise<Response>;
    process.kill(billing, 'SIGSTOP');
    try {
      // The first upload's refund reaches billing and waits there; the next call, admitted to the
      // place it freed, waits for that refund to land before it is authorized...
      first?.destroy();
      await pause();
      call = stack.api('/v1/xbel-to-html', { method: 'POST', body: form, apiKey });
      await pause();
      // ...and the second upload ends meanwhile: its refund is queued behind the first's.
      second?.destroy();
      await pause();
    } finally {
      process.kill(billing, 'SIGCONT');
    }
    const res = await call;
    await res.arrayBuffer();
    expect(res.status).to.equal(200);
    // Both refunds were given back before the call was authorized: neither may be missing after it.
    expect(creditsHeader(res), 'the call’s own credits header').to.equal(9);
    expect((await quota(stack, { apiKey })).remaining).to.equal(9);
  });

  it('a client that leaves while its upload is authorized: the hold it is granted comes back at once', async () => {
    // Its quota is read again and again below: its rate is not what is tested.
    const { apiKey } = await account(stack, 'STARTER', '--credits', '10', '--rate-limit', '100000');
    const billing = stack.pid('billing');
    if (billing === undefined) throw new Error('the stack has no billing process');
    // Billing stopped: the edge admits the upload from its headers and waits on Authorize meanwhile.
    process.kill(billing, 'SIGSTOP');
    try {
      const socket = stalledUpload(port, apiKey);
      await new Promise((resolve) => setTimeout(resolve, 500));
      socket.destroy();
      await new Promise((resolve) => setTimeout(resolve, 200));
    } finally {
      process.kill(billing, 'SIGCONT');
    }
    // The hold is granted to a request whose close has passed: it must not wait for a body that
    // never comes (the hold would stay taken until it expires, minutes later).
    await eventually(async () => expect((await quota(stack, { apiKey })).remaining).to.equal(10), 10_000);
  });

  describe('a refused upload is answered, never reset (raw client, ten times in a row)', () => {
    const cases: [string, () => RawOptions, number][] = [
      ['anonymous, 11 MB declared, body sent at once', () => ({ fileBytes: 11 * MIB, send: 'at-once' }), 413],
      [
        'anonymous, 11 MB declared, Expect: 100-continue, body sent without waiting',
        () => ({ fileBytes: 11 * MIB, expectContinue: true, send: 'at-once' }),
        413,
      ],
      [
        'anonymous, 9 MB declared, Expect: 100-continue, body sent without waiting',
        () => ({ fileBytes: 9 * MIB, expectContinue: true, send: 'at-once' }),
        401,
      ],
      ['anonymous, 11 MB chunked', () => ({ fileBytes: 11 * MIB, chunked: true, send: 'at-once' }), 401],
      [
        'with a key, 11 MB chunked, refused while it streams',
        () => ({ headers: bearer(stack.apiKey), fileBytes: 11 * MIB, chunked: true, send: 'at-once' }),
        413,
      ],
      [
        'with a key, 11 MB declared, Expect: 100-continue, body sent without waiting',
        () => ({ headers: bearer(stack.apiKey), fileBytes: 11 * MIB, expectContinue: true, send: 'at-once' }),
        413,
      ],
      // Far more than the edge discards by reading: the rest is dropped while the connection lingers.
      ['anonymous, 40 MB declared, body sent at once', () => ({ fileBytes: 40 * MIB, send: 'at-once' }), 413],
      [
        'with a key, 40 MB chunked, refused while it streams',
        () => ({ headers: bearer(stack.apiKey), fileBytes: 40 * MIB, chunked: true, send: 'at-once' }),
        413,
      ],
    ];
    for (const [index, [what, options, status]] of cases.entries()) {
      it(`${what}: ${status}`, async () => {
        for (let round = 1; round <= 10; round++) {
          // One address per case: the anonymous rate (30 a minute per address) is not what is tested.
          const result = await rawUpload(port, 'xbel-to-html', { localAddress: `127.0.0.${30 + index}`, ...options() });
          expect(result.status, `round ${round}: ${JSON.stringify(result)}`).to.equal(status);
          expect(result.body?.success).to.equal(false);
          expect(result.errorBeforeAnswer, `round ${round}`).to.equal(undefined);
          expect(result.errorAfterAnswer, `round ${round}: the connection was reset`).to.equal(undefined);
        }
      });
    }
  });

  it('16 concurrent 9 MB uploads without a credential are refused, and the edge grows by less than 64 MB', async () => {
    const pid = stack.pid('edge');
    if (pid === undefined) throw new Error('no edge process');
    const kb = (field: string) =>
      Number(new RegExp(`^${field}:\\s+(\\d+)`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
    // Resets the peak (VmHWM) to the current RSS.
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    const idle = kb('VmRSS');
    const results = await Promise.all(
      Array.from({ length: 16 }, () =>
        rawUpload(port, 'xbel-to-html', { fileBytes: 9 * MIB, send: 'at-once', localAddress: '127.0.0.50' }),
      ),
    );
    const grownMb = (kb('VmHWM') - idle) / 1024;
    for (const result of results) {
      expect([401, 429]).to.include(result.status);
      expect(result.errorBeforeAnswer).to.equal(undefined);
    }
    expect(grownMb, `the edge's RSS grew ${grownMb.toFixed(1)} MB`).to.be.below(64);
  });
});
