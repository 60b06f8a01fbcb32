import { accountSubject, env, REVOCATIONS_SUBJECT } from '@webutil/kit';
import { connect, type NatsConnection } from 'nats';

/** Where a failure to send is reported (the service's logger, or the CLI's stderr). */
interface Warn {
  warn(details: object, message: string): void;
}

/** Where the notices go (the service and the operator CLI read it). */
export const noticeEnv = { NATS_URL: env.optionalString() };

/**
 * Tells every edge, over NATS, that an account's credentials or plan changed, so none keeps
 * serving the account from its views or credit leases. Without NATS_URL nothing is told: a single
 * edge then sees the change within CALLER_VIEW_MS. A notice that cannot be sent is logged; the
 * change itself stands (billing refuses the old credential on the next call that reaches it).
 */
export class RevocationNotices {
  private constructor(
    private readonly nc: NatsConnection | undefined,
    private readonly log: Warn,
  ) {}

  static async connect(url: string | undefined, log: Warn): Promise<RevocationNotices> {
    if (!url) return new RevocationNotices(undefined, log);
    try {
      const nc = await connect({ servers: url, name: 'billing-revocations', timeout: 2_000 });
      return new RevocationNotices(nc, log);
    } catch (err) {
      log.warn({ err: (err as Error).message }, 'NATS unreachable: edges will not be told of revocations');
      return new RevocationNotices(undefined, log);
    }
  }

  /** Announces the change and waits until the NATS server has it (edges get it from there). */
  async announce(accountId: string): Promise<void> {
    if (!this.nc) return;
    try {
      this.nc.publish(REVOCATIONS_SUBJECT, accountSubject(accountId));
      await this.nc.flush();
    } catch (err) {
      this.log.warn({ accountId, err: (err as Error).message }, 'telling the edges of a revocation failed');
    }
  }

  async close(): Promise<void> {
    await this.nc?.drain().catch(() => undefined);
  }
}
