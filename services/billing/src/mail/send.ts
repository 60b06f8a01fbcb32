import type { Logger } from '@webutil/kit';
import type { Mailer, MailMessage } from '@webutil/kit/mail';

/**
 * Sends off the caller's path: an answer never waits on (or reveals) the mail server, and a mail
 * server that is down costs a logged warning, not a failed sign-up. The promise is for tests.
 */
export function sendInBackground(mailer: Mailer, message: MailMessage, log: Logger, what: string): Promise<void> {
  return mailer.send(message).catch((err: unknown) => log.warn({ err, what }, 'could not send mail'));
}
