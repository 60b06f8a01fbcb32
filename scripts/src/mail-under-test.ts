/**
 * Mail in tests: a real SMTP server in process (smtp-server) whose received messages are parsed
 * (mailparser), and the dev outbox (DATA_DIR/mail/*.eml) a stack without SMTP_URL writes.
 */
import { readdir, readFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { type AddressObject, simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  to: string[];
  from: string;
  subject: string;
  text: string;
}

const addresses = (field: AddressObject | AddressObject[] | undefined): string[] =>
  (Array.isArray(field) ? field : field ? [field] : []).flatMap((a) => a.value.map((v) => v.address ?? ''));

async function parse(source: Buffer | NodeJS.ReadableStream): Promise<ReceivedMail> {
  const mail = await simpleParser(source as Buffer);
  return {
    to: addresses(mail.to),
    from: addresses(mail.from)[0] ?? '',
    subject: mail.subject ?? '',
    text: mail.text ?? '',
  };
}

/** The link to `page` (e.g. verify-email) in a mail's text, or undefined. */
export function linkIn(mail: ReceivedMail, page: string): URL | undefined {
  for (const match of mail.text.matchAll(/https?:\/\/\S+/g)) {
    const url = new URL(match[0]);
    if (url.pathname.endsWith(`/${page}`)) return url;
  }
  return undefined;
}

/** Every message of the dev outbox, oldest first. */
export async function readOutbox(dataDir: string): Promise<ReceivedMail[]> {
  const dir = path.join(dataDir, 'mail');
  const files = (await readdir(dir).catch(() => [] as string[])).filter((f) => f.endsWith('.eml')).sort();
  return Promise.all(files.map(async (file) => parse(await readFile(path.join(dir, file)))));
}

/** Polls until `find` picks a message out of `read()` (mail is sent off the answer's path). */
export async function waitForMail(
  read: () => Promise<readonly ReceivedMail[]> | readonly ReceivedMail[],
  find: (mail: ReceivedMail) => boolean,
  waitMs = 15_000,
): Promise<ReceivedMail> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const found = (await read()).filter(find).at(-1);
    if (found) return found;
    if (Date.now() > deadline) throw new Error(`no such mail arrived within ${waitMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** An SMTP server on 127.0.0.1 that keeps every message it receives. */
export class SmtpUnderTest {
  private constructor(
    private readonly server: SMTPServer,
    readonly url: string,
    /** Every message received, oldest first. */
    readonly received: ReceivedMail[],
  ) {}

  static async start(): Promise<SmtpUnderTest> {
    const received: ReceivedMail[] = [];
    const server = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      logger: false,
      onData(stream, _session, callback) {
        parse(stream).then(
          (mail) => {
            received.push(mail);
            callback();
          },
          (err: Error) => callback(err),
        );
      },
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    const { port } = server.server.address() as AddressInfo;
    return new SmtpUnderTest(server, `smtp://127.0.0.1:${port}`, received);
  }

  /** The newest message to `to` that `find` accepts, waiting for it to arrive. */
  waitFor(to: string, find: (mail: ReceivedMail) => boolean = () => true, waitMs?: number): Promise<ReceivedMail> {
    return waitForMail(
      () => this.received,
      (mail) => mail.to.includes(to) && find(mail),
      waitMs,
    );
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
