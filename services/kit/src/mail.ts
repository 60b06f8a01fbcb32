/**
 * Outgoing mail for every service that sends some (billing's account mail, the monitors' alerts):
 * SMTP through nodemailer when SMTP_URL is set; else each message goes to the log and to one file
 * under DATA_DIR/mail/, so a developer follows its links offline (docs/decisions/0421-mail-transport.md).
 */
import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import nodemailer, { type Transporter } from 'nodemailer';
import { env } from './config.js';
import type { Logger } from './logger.js';

/** The variables that configure mail (a service spreads them into its config). */
export const mailEnv = {
  /** smtp://user:pass@host:587 or smtps://...:465; unset: the dev outbox (log and DATA_DIR/mail/). */
  SMTP_URL: env.optionalString(),
  /** The From header of every message. */
  MAIL_FROM: env.string('Web Utility API <no-reply@webutil.invalid>'),
};

export interface MailMessage {
  to: string;
  subject: string;
  /** Plain text; links on lines of their own. */
  text: string;
  html?: string;
}

export interface Mailer {
  /** Sends one message; rejects when the SMTP server refuses it or cannot be reached. */
  send(message: MailMessage): Promise<void>;
  /** Where messages go: `smtp` or the outbox directory. */
  readonly target: string;
  close(): void;
}

export interface MailerOptions {
  smtpUrl?: string;
  from: string;
  /** The dev outbox is DATA_DIR/mail/. */
  dataDir: string;
  log: Logger;
}

/** The outbox directory of a data directory (tests and developers read messages there). */
export const outboxDir = (dataDir: string) => path.join(dataDir, 'mail');

export function createMailer({ smtpUrl, from, dataDir, log }: MailerOptions): Mailer {
  if (smtpUrl) {
    const transport: Transporter = nodemailer.createTransport(smtpUrl, { from });
    return {
      target: 'smtp',
      send: async (message) => {
        const sent = await transport.sendMail(message);
        log.info({ to: message.to, subject: message.subject, messageId: sent.messageId }, 'mail sent');
      },
      close: () => transport.close(),
    };
  }
  // nodemailer builds the same RFC 5322 message it would send, as a buffer: the file is a .eml any mail reader opens.
  const transport = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'unix' }, { from });
  const dir = outboxDir(dataDir);
  return {
    target: dir,
    send: async (message) => {
      const built = await transport.sendMail(message);
      await mkdir(dir, { recursive: true });
      const file = path.join(
        dir,
        `${new Date().toISOString().replace(/[:.]/g, '-')}-${randomBytes(4).toString('hex')}.eml`,
      );
      await writeFile(file, built.message as Buffer);
      log.info({ to: message.to, subject: message.subject, file, text: message.text }, 'mail written to the outbox');
    },
    close: () => transport.close(),
  };
}
