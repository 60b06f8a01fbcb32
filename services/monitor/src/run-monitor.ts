/**
 * What a claimed run does (docs/decisions/0461-monitor-runs-and-their-billing.md): hold the
 * operation's credits on the owning account, call the operation's service with the monitor's
 * request, spend the hold when it answered (a failed operation spends nothing), keep the result
 * and what changed since the previous run, open and close a down-check's incidents, and hand the
 * alerts to the sink. An account out of credits has its monitors paused, never overspent.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Logger } from '@webutil/kit';
import type { ArtifactStore } from '@webutil/kit/artifacts';
import { CallerPolicy, Refusal } from '@webutil/proto/webutil/billing/v1/billing';
import type { AlertSink } from './alert-delivery.js';
import type { AlertInput } from './alert-messages.js';
import { isMonitorKind, type MonitorKind } from './bounds.js';
import type { RunClients } from './clients.js';
import { monitorInMaintenance } from './in-maintenance.js';
import { recordRunInRollup } from './rollup.js';
import { imagesOfRun } from './run-images.js';
import { KIND_RUNS, type Performed, performOperation } from './run-operations.js';
import type { RunClaimed } from './scheduler.js';
import type { MonitorChanges, MonitorRecord, MonitorStore, RunRecord, RunResult } from './store/store.js';

/** Consecutive down-checks that open an incident, and up ones that close it, when the monitor names none. */
export const DEFAULT_FAILURE_THRESHOLD = 3;
export const DEFAULT_SUCCESS_THRESHOLD = 2;
/** Runs looked back through for the last one with a result to compare with. */
const LOOK_BACK = 5;
export const OUT_OF_CREDITS = 'out of credits';

export interface RunMonitorDeps {
  store: MonitorStore;
  clients: RunClients;
  /** Screenshot captures (the next run's baseline) and diff images. */
  images: ArtifactStore;
  alerts: AlertSink;
  log: Logger;
  /** Where the website and API are reached: the links in alerts. */
  publicBaseUrl: string;
  /** Wait before the re-check that confirms a down-check incident. */
  recheckDelayMs: number;
  crawlPollMs: number;
  crawlDeadlineMs: number;
  now?: () => number;
}

interface Rules {
  failureThreshold?: number;
  successThreshold?: number;
  expiryDays?: number[];
  changeThresholdPercent?: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const messageOf = (err: unknown) => (err instanceof Error ? err.message : String(err)).slice(0, 300);

/** A hold's name from the run's id: a retried Authorize finds the same hold (8 to 64 of [A-Za-z0-9_-]). */
const holdName = (runId: string) => `monrun_${createHash('sha256').update(runId).digest('base64url').slice(0, 40)}`;

/** The RunClaimed the scheduler calls for each slot it won. */
export function runMonitor(deps: RunMonitorDeps): RunClaimed {
  const runner = new MonitorRunner(deps);
  return (monitor, run) => runner.run(monitor, run);
}

class MonitorRunner {
  private readonly now: () => number;
  /** The monitors with a run in flight on this replica. */
  private readonly running = new Set<string>();

  constructor(private readonly deps: RunMonitorDeps) {
    this.now = deps.now ?? Date.now;
  }

  /**
   * A slot that comes while the monitor's previous run is still going (a crawl longer than its
   * interval) is skipped, so a monitor's counters and incidents are read in order and runs never pile up.
   */
  async run(monitor: MonitorRecord, run: RunRecord): Promise<void> {
    if (this.running.has(monitor.id)) {
      await this.finish(run, this.finished('skipped', 'the previous run was still going', 0));
      return;
    }
    this.running.add(monitor.id);
    try {
      await this.runOnce(monitor.id, monitor.subject, run);
    } finally {
      this.running.delete(monitor.id);
    }
  }

  private async runOnce(id: string, subject: string, run: RunRecord): Promise<void> {
    const { store, log } = this.deps;
    // Read again: a run of this monitor may have finished since the scheduler read it.
    const monitor = await store.getMonitor(subject, id);
    if (!monitor || !isMonitorKind(monitor.kind)) {
      await this.finish(run, this.finished('skipped', 'the monitor is gone', 0));
      return;
    }
    const kind = monitor.kind;
    const { credits } = KIND_RUNS[kind];
    const reservationId = holdName(run.id);
    // Billing out of reach: the slot is skipped, nothing held.
    const refusal = await this.hold(monitor, kind, reservationId).catch(
      (err: unknown) => `billing could not be asked: ${messageOf(err)}`,
    );
    if (refusal) {
      await this.finish(run, this.finished('skipped', refusal, 0));
      return;
    }
    let spent = false;
    const charge = async () => {
      if (!spent) spent = await this.settle(reservationId, kind, credits, targetOf(monitor));
    };
    const rules = JSON.parse(monitor.alertsJson) as Rules;
    let performed: Performed;
    // The meta-scan replica that answered a down-check: its re-check is sent to another.
    let peer: string | undefined;
    try {
      performed = await performOperation(kind, monitor.requestJson, {
        onPeer: (answered) => {
          peer = answered;
        },
        clients: this.deps.clients,
        images: this.deps.images,
        requestId: run.id,
        previous: await this.previousResult(monitor.id, run.slot),
        rules,
        intervalSeconds: monitor.intervalSeconds,
        charge,
        crawlPollMs: this.deps.crawlPollMs,
        crawlDeadlineMs: this.deps.crawlDeadlineMs,
      });
      await charge();
    } catch (err) {
      // Nothing spent unless the operation stood before it failed (a crawl's queued job).
      if (!spent) await this.settle(reservationId, kind, 0, targetOf(monitor));
      log.info({ err, monitorId: monitor.id, runId: run.id }, 'a monitor run failed');
      await this.finish(run, this.finished('failed', messageOf(err), spent ? credits : 0));
      if (kind !== 'down-check') await this.update(monitor, { status: 'failed', lastRunAt: this.now() });
      return;
    }

    if (kind === 'down-check') performed = await this.confirmDown(monitor, run, performed, rules, peer);
    const result = {
      ...this.finished('ok', performed.reason, spent ? credits : 0),
      verdict: performed.verdict,
      responseTimeMs: performed.responseTimeMs,
      changesJson: performed.changes && JSON.stringify(performed.changes),
      resultJson: JSON.stringify(performed.result),
    };
    await this.finish(run, result);
    if (kind === 'down-check') {
      await this.incidents(monitor, run, performed, rules);
      return;
    }
    if (!(await this.update(monitor, { status: 'ok', lastRunAt: this.now() }))) {
      // Deleted while this run went on: its images would outlive it (the delete read the runs before this one).
      await Promise.all(imagesOfRun(result).map((name) => this.deps.images.delete(name).catch(() => undefined)));
      return;
    }
    if (performed.changes?.alert) {
      await this.alert(monitor, run, {
        event: 'changed',
        lines: performed.changes.lines,
        changes: performed.changes,
      });
    }
  }

  /** Holds the run's credits: a refusal's reason, or undefined. Out of credits pauses the account's monitors. */
  private async hold(monitor: MonitorRecord, kind: MonitorKind, reservationId: string): Promise<string | undefined> {
    const { credits, timeoutMs } = KIND_RUNS[kind];
    const reply = await this.deps.clients.billing.authorize(
      {
        credential: { clientIp: '', service: { subject: monitor.subject, service: 'monitor' } },
        operation: kind,
        credits,
        challenge: false,
        callers: CallerPolicy.CALLER_POLICY_ANY,
        stateChanging: false,
        holdMs: timeoutMs + this.deps.crawlPollMs,
        reservationId,
      },
      { requestId: reservationId, timeoutMs: 10_000 },
    );
    const outcome = reply.outcome;
    if (outcome?.$case === 'grant') return undefined;
    const denial = outcome?.$case === 'denial' ? outcome.denial : undefined;
    if (denial?.refusal === Refusal.REFUSAL_INSUFFICIENT_CREDITS) {
      const paused = await this.deps.store.pauseAll(monitor.subject, OUT_OF_CREDITS, this.now());
      // The notice: the log, each monitor's pausedReason on the API and the website, and one mail.
      this.deps.log.warn(
        { subject: monitor.subject, paused, remaining: denial.remaining, needed: credits },
        'an account is out of credits: its monitors are paused',
      );
      if (paused.length > 0) await this.noticePaused(monitor.subject, paused, reservationId);
      return `${OUT_OF_CREDITS}: the account's monitors are paused`;
    }
    return denial ? `billing refused the run: ${denial.message}` : 'billing gave no answer';
  }

  /**
   * Mails the account once per pause (decision 0483): pauseAll answers only the monitors this call
   * moved from active to paused, so the runs that find the account out of credits after it (on
   * this replica or another) pause nothing and send nothing. A notice billing cannot take is logged.
   */
  private async noticePaused(subject: string, ids: readonly string[], requestId: string): Promise<void> {
    try {
      const all = await this.deps.store.listMonitors(subject);
      const monitors = all.filter((m) => ids.includes(m.id)).map((m) => ({ id: m.id, name: m.name }));
      const { email } = await this.deps.clients.accountMail.sendMonitorsPausedNotice(
        { subject, monitors },
        { requestId: `${requestId}-paused`, timeoutMs: 10_000 },
      );
      this.deps.log.info({ subject, to: email, monitors: ids.length }, 'the account was told its monitors are paused');
    } catch (err) {
      this.deps.log.warn({ err, subject }, 'the paused-monitors notice could not be sent');
    }
  }

  /** Spends the hold for this call (credits > 0) or returns it; true when spent. */
  private async settle(reservationId: string, operation: string, credits: number, target: string): Promise<boolean> {
    const spent = credits > 0 ? [{ operation, credits, target: target.slice(0, 300) }] : [];
    try {
      const reply = await this.deps.clients.billing.settle(
        { settlements: [{ reservationId, spent, keepOpen: false }] },
        { requestId: reservationId, timeoutMs: 10_000 },
      );
      return credits > 0 && reply.spent.includes(reservationId);
    } catch (err) {
      // An unsettled hold expires and its credits go back: the run is then free, never charged twice.
      this.deps.log.warn({ err, reservationId }, 'a monitor run’s credits could not be settled');
      return false;
    }
  }

  /**
   * A down-check that would open an incident is checked once more after a short wait before it
   * counts. The re-check goes to a meta-scan replica other than the one that answered `peer` (a
   * client of that replica's address, decision 0486); with one replica, it is the same one later.
   * The re-check is free.
   */
  private async confirmDown(
    monitor: MonitorRecord,
    run: RunRecord,
    performed: Performed,
    rules: Rules,
    peer: string | undefined,
  ): Promise<Performed> {
    const threshold = rules.failureThreshold ?? DEFAULT_FAILURE_THRESHOLD;
    if (performed.verdict !== 'down' || monitor.failures + 1 < threshold) return performed;
    if (await this.deps.store.openIncidentOf(monitor.id)) return performed;
    await sleep(this.deps.recheckDelayMs);
    try {
      const metaScan = await this.deps.clients.metaScanOtherThan(peer);
      const again = await performOperation('down-check', monitor.requestJson, {
        clients: { ...this.deps.clients, metaScan },
        images: this.deps.images,
        requestId: `${run.id}#recheck`,
        previous: undefined,
        rules,
        intervalSeconds: monitor.intervalSeconds,
        charge: async () => undefined,
        crawlPollMs: this.deps.crawlPollMs,
        crawlDeadlineMs: this.deps.crawlDeadlineMs,
      });
      if (again.verdict === 'down') return { ...performed, reason: `${performed.reason} (confirmed by a re-check)` };
      return { ...again, reason: `${performed.reason}, then ${again.reason} on a re-check` };
    } catch {
      return performed;
    }
  }

  /** The confirmation thresholds: N down in a row open an incident, M up in a row close it. */
  private async incidents(monitor: MonitorRecord, run: RunRecord, performed: Performed, rules: Rules): Promise<void> {
    const { store } = this.deps;
    const down = performed.verdict === 'down';
    const failures = down ? monitor.failures + 1 : 0;
    const successes = down ? 0 : monitor.successes + 1;
    const now = this.now();
    const open = await store.openIncidentOf(monitor.id);
    let status = open ? 'down' : 'up';
    if (!open && down && failures >= (rules.failureThreshold ?? DEFAULT_FAILURE_THRESHOLD)) {
      const incident = {
        id: `inc_${randomBytes(12).toString('base64url')}`,
        monitorId: monitor.id,
        state: 'open' as const,
        openedAt: now,
        reason: performed.reason,
        silenced: monitorInMaintenance(monitor, now),
      };
      await store.openIncident(incident);
      status = 'down';
      await this.alert(monitor, run, {
        event: 'incident.opened',
        lines: [`${targetOf(monitor)} is down: ${performed.reason} (${failures} checks in a row).`],
        incident: {
          id: incident.id,
          openedAt: new Date(now).toISOString(),
          durationSeconds: 0,
          reason: incident.reason,
        },
      });
    } else if (open && !down && successes >= (rules.successThreshold ?? DEFAULT_SUCCESS_THRESHOLD)) {
      await store.closeIncident(open.id, now);
      status = 'up';
      const durationSeconds = Math.round((now - open.openedAt) / 1000);
      await this.alert(monitor, run, {
        event: 'incident.closed',
        lines: [`${targetOf(monitor)} is up again: ${performed.reason} (${successes} checks in a row).`],
        incident: {
          id: open.id,
          openedAt: new Date(open.openedAt).toISOString(),
          closedAt: new Date(now).toISOString(),
          durationSeconds,
          reason: open.reason,
        },
      });
    }
    await this.update(monitor, { status, failures, successes, lastRunAt: now });
  }

  private async alert(
    monitor: MonitorRecord,
    run: RunRecord,
    alert: Pick<AlertInput, 'event' | 'lines' | 'changes' | 'incident'>,
  ): Promise<void> {
    const base = this.deps.publicBaseUrl.replace(/\/+$/, '');
    const slot = new Date(run.slot).toISOString();
    const input: AlertInput = {
      event: alert.event,
      at: new Date(this.now()).toISOString(),
      monitor: { id: monitor.id, name: monitor.name, kind: monitor.kind, target: targetOf(monitor) },
      lines: alert.lines,
      links: {
        monitor: `${base}/monitors#${monitor.id}`,
        run: `${base}/v1/monitors/${monitor.id}/runs?from=${slot}&to=${slot}`,
      },
    };
    const diffImage = (alert.changes as { diffImage?: string } | undefined)?.diffImage;
    if (diffImage) input.links.diffImage = `${base}/v1/monitor-images/${diffImage}`;
    if (alert.changes !== undefined) input.changes = alert.changes;
    if (alert.incident) input.incident = alert.incident;
    try {
      await this.deps.alerts.deliver(monitor, input);
    } catch (err) {
      this.deps.log.warn({ err, monitorId: monitor.id, event: alert.event }, 'a monitor alert was not delivered');
    }
  }

  /** The last result kept before this slot (a run that failed kept none, so it is passed over). */
  private async previousResult(monitorId: string, slot: number): Promise<unknown> {
    let before = slot;
    for (let i = 0; i < LOOK_BACK; i++) {
      const previous = await this.deps.store.previousRun(monitorId, before);
      if (!previous) return undefined;
      if (previous.resultJson) return JSON.parse(previous.resultJson) as unknown;
      before = previous.slot;
    }
    return undefined;
  }

  /** Stores the run's end and adds it to its day's rollup (decision 0467). */
  private async finish(run: RunRecord, result: RunResult): Promise<void> {
    await this.deps.store.finishRun(run.id, result);
    await recordRunInRollup(this.deps.store, { ...run, ...result }).catch((err: unknown) =>
      this.deps.log.warn({ err, runId: run.id }, 'a run was not added to its day'),
    );
  }

  private finished(outcome: string, reason: string, creditsSpent: number) {
    return { finishedAt: this.now(), outcome, reason, creditsSpent };
  }

  /** False when the monitor is gone (deleted meanwhile). */
  private async update(monitor: MonitorRecord, changes: MonitorChanges): Promise<boolean> {
    return this.deps.store.updateMonitor(monitor.subject, monitor.id, changes);
  }
}

/** What the monitor watches, as its input names it (a url, or an ssl-scan's domain). */
export function targetOf(monitor: MonitorRecord): string {
  const input = JSON.parse(monitor.inputJson) as { url?: string; domain?: string };
  return input.url ?? input.domain ?? monitor.name;
}
