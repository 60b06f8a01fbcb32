import path from 'node:path';
import { createLogger } from '@webutil/kit';
import { createMailer } from '@webutil/kit/mail';
import { EmailVerification } from '../src/mail/email-verification.js';
import { SqliteMailStore } from '../src/mail/store-sqlite.js';
import type { BillingStore } from '../src/stores/store.js';

/** Address verification over a mail store in `dir`, mailing to the dev outbox there (for Sessions in unit tests). */
export function verificationIn(dir: string, billing: BillingStore, clock: () => number): EmailVerification {
  const log = createLogger('test', 'silent');
  return new EmailVerification({
    mail: new SqliteMailStore(path.join(dir, 'mail.sqlite')),
    billing,
    mailer: createMailer({ from: 'test@webutil.test', dataDir: dir, log }),
    clock,
    log,
    publicBaseUrl: 'http://127.0.0.1:8080',
  });
}
