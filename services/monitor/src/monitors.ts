/** Monitors as their owners manage them: create within the plan's bounds, read, change, pause, delete. */
import { randomBytes } from 'node:crypto';
import { failedPrecondition, invalidArgument, type Logger, notFound } from '@webutil/kit';
import type { ArtifactStore } from '@webutil/kit/artifacts';
import {
  type CreateMonitorRequest,
  type Incident,
  type Monitor,
  MonitorAlerts,
  type MonitorOwner,
  type Run,
  type UpdateMonitorRequest,
} from '@webutil/proto/webutil/monitor/v1/monitor';
import { boundsOf, isMonitorKind, MAX_INTERVAL_SECONDS, type MonitorKind, minIntervalSeconds } from './bounds.js';
import { imagesOfRun } from './run-images.js';
import { slotAfter } from './slots.js';
import type { IncidentRecord, MonitorChanges, MonitorRecord, MonitorStore, RunRecord } from './store/store.js';

export interface MonitorsDeps {
  store: MonitorStore;
  /** Screenshot monitors' captures and diff images, deleted with their monitor. */
  images?: ArtifactStore;
  log?: Logger;
  now?: () => number;
  /** Intervals pass this many times faster (tests only, MONITOR_TIME_SCALE); default 1. */
  timeScale?: number;
}

const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString());
export const newId = (prefix: string) => `${prefix}_${randomBytes(12).toString('base64url')}`;

const MONITOR_NOT_FOUND = () => notFound('MONITOR_NOT_FOUND', 'no monitor of this account has that id');

export class Monitors {
  private readonly now: () => number;

  constructor(private readonly deps: MonitorsDeps) {
    this.now = deps.now ?? Date.now;
  }

  async create(request: CreateMonitorRequest): Promise<Monitor> {
    const owner = ownerOf(request.owner);
    const kind = kindOf(request.kind);
    checkInterval(kind, owner.plan, request.intervalSeconds);
    const bounds = boundsOf(owner.plan);
    if ((await this.deps.store.countMonitors(owner.subject)) >= bounds.monitors) {
      throw failedPrecondition(
        'MONITOR_LIMIT_REACHED',
        `the ${owner.plan} plan allows ${bounds.monitors} monitors; delete one or change plan`,
      );
    }
    const now = this.now();
    const id = newId('mon');
    const record: MonitorRecord = {
      id,
      subject: owner.subject,
      name: request.name,
      kind,
      inputJson: request.inputJson,
      requestJson: request.requestJson,
      intervalSeconds: request.intervalSeconds,
      alertsJson: JSON.stringify(request.alerts ?? {}),
      state: 'active',
      status: 'unknown',
      createdAt: now,
      updatedAt: now,
      nextRunAt: slotAfter(id, request.intervalSeconds, now, this.deps.timeScale),
      failures: 0,
      successes: 0,
    };
    await this.deps.store.insertMonitor(record);
    return presentMonitor(record);
  }

  async list(owner: MonitorOwner | undefined): Promise<Monitor[]> {
    return (await this.deps.store.listMonitors(ownerOf(owner).subject)).map(presentMonitor);
  }

  async get(owner: MonitorOwner | undefined, id: string): Promise<Monitor> {
    return presentMonitor(await this.find(owner, id));
  }

  async update(request: UpdateMonitorRequest): Promise<Monitor> {
    const owner = ownerOf(request.owner);
    const current = await this.find(request.owner, request.id);
    const changes: MonitorChanges = { updatedAt: this.now() };
    if (request.name !== undefined) changes.name = request.name;
    if (request.inputJson !== undefined) {
      changes.inputJson = request.inputJson;
      changes.requestJson = request.requestJson ?? current.requestJson;
    }
    if (request.alerts !== undefined) changes.alertsJson = JSON.stringify(request.alerts);
    if (request.intervalSeconds !== undefined && request.intervalSeconds !== current.intervalSeconds) {
      checkInterval(current.kind as MonitorKind, owner.plan, request.intervalSeconds);
      changes.intervalSeconds = request.intervalSeconds;
      changes.nextRunAt = slotAfter(current.id, request.intervalSeconds, this.now(), this.deps.timeScale);
    }
    await this.deps.store.updateMonitor(owner.subject, current.id, changes);
    return this.get(request.owner, current.id);
  }

  /** Deletes the monitor with its runs, incidents, days and stored images (decision 0485). */
  async delete(owner: MonitorOwner | undefined, id: string): Promise<void> {
    const { subject } = ownerOf(owner);
    const monitor = await this.deps.store.getMonitor(subject, id);
    // The images are named in the runs, so they are read before the runs go.
    const images = monitor?.kind === 'screenshot' ? await this.imagesOf(id) : [];
    if (!(await this.deps.store.deleteMonitor(subject, id))) throw MONITOR_NOT_FOUND();
    await this.deleteImages(images);
  }

  /** Every image a monitor's kept runs name (screenshot runs are hourly at most: a few thousand runs). */
  private async imagesOf(monitorId: string): Promise<string[]> {
    const names: string[] = [];
    let beforeSlot: number | undefined;
    for (;;) {
      const page = await this.deps.store.listRuns(monitorId, { limit: 500, beforeSlot });
      for (const run of page) names.push(...imagesOfRun(run));
      if (page.length < 500) return names;
      beforeSlot = page.at(-1)?.slot;
    }
  }

  /** Deletes stored images; one that fails is left to its lifetime's end (logged), not the request's failure. */
  async deleteImages(names: string[]): Promise<void> {
    const { images, log } = this.deps;
    if (!images) return;
    for (const name of names) {
      await images.delete(name).catch((err: unknown) => log?.warn({ err, name }, 'a monitor image was not deleted'));
    }
  }

  async pause(owner: MonitorOwner | undefined, id: string): Promise<Monitor> {
    const current = await this.find(owner, id);
    if (current.state === 'active') {
      await this.deps.store.updateMonitor(current.subject, id, {
        state: 'paused',
        pausedReason: 'by request',
        updatedAt: this.now(),
      });
    }
    return this.get(owner, id);
  }

  /** Scheduled again from its next slot (the slots it was paused over are not run). */
  async resume(owner: MonitorOwner | undefined, id: string): Promise<Monitor> {
    const current = await this.find(owner, id);
    if (current.state === 'paused') {
      const now = this.now();
      await this.deps.store.updateMonitor(current.subject, id, {
        state: 'active',
        pausedReason: undefined,
        updatedAt: now,
        nextRunAt: slotAfter(id, current.intervalSeconds, now, this.deps.timeScale),
      });
    }
    return this.get(owner, id);
  }

  async runs(
    owner: MonitorOwner | undefined,
    id: string,
    page: { from?: string; to?: string; limit: number; pageToken?: string },
  ): Promise<{ runs: Run[]; nextPageToken?: string }> {
    const monitor = await this.find(owner, id);
    const limit = Math.min(Math.max(page.limit || 50, 1), 500);
    const beforeSlot = page.pageToken === undefined ? undefined : Number(page.pageToken);
    if (beforeSlot !== undefined && !Number.isSafeInteger(beforeSlot)) {
      throw invalidArgument('INVALID_PAGE_TOKEN', 'pageToken is not one this API returned');
    }
    const records = await this.deps.store.listRuns(monitor.id, {
      from: page.from === undefined ? undefined : Date.parse(page.from),
      to: page.to === undefined ? undefined : Date.parse(page.to),
      limit: limit + 1,
      beforeSlot,
    });
    const shown = records.slice(0, limit);
    const last = shown.at(-1);
    return {
      runs: shown.map(presentRun),
      nextPageToken: records.length > limit && last ? String(last.slot) : undefined,
    };
  }

  async incidents(owner: MonitorOwner | undefined, id: string, limit: number): Promise<Incident[]> {
    const monitor = await this.find(owner, id);
    const records = await this.deps.store.listIncidents(monitor.id, Math.min(Math.max(limit || 50, 1), 500));
    return records.map((record) => presentIncident(record, this.now()));
  }

  private async find(owner: MonitorOwner | undefined, id: string): Promise<MonitorRecord> {
    const found = await this.deps.store.getMonitor(ownerOf(owner).subject, id);
    if (!found) throw MONITOR_NOT_FOUND();
    return found;
  }
}

function ownerOf(owner: MonitorOwner | undefined): MonitorOwner {
  if (!owner?.subject.startsWith('account:')) throw invalidArgument('OWNER_REQUIRED', 'monitors belong to an account');
  return owner;
}

function kindOf(kind: string): MonitorKind {
  if (!isMonitorKind(kind)) throw invalidArgument('INVALID_KIND', `there is no monitor kind ${kind}`);
  return kind;
}

function checkInterval(kind: MonitorKind, plan: string, seconds: number): void {
  const min = minIntervalSeconds(kind, plan);
  if (!Number.isInteger(seconds) || seconds < min || seconds > MAX_INTERVAL_SECONDS) {
    throw invalidArgument(
      'INVALID_INTERVAL',
      `intervalSeconds of a ${kind} monitor on the ${plan} plan must be from ${min} to ${MAX_INTERVAL_SECONDS}`,
    );
  }
}

export function presentMonitor(record: MonitorRecord): Monitor {
  return {
    id: record.id,
    name: record.name,
    kind: record.kind,
    inputJson: record.inputJson,
    intervalSeconds: record.intervalSeconds,
    alerts: MonitorAlerts.fromPartial(JSON.parse(record.alertsJson) as object),
    state: record.state,
    pausedReason: record.pausedReason,
    status: record.status,
    createdAt: new Date(record.createdAt).toISOString(),
    updatedAt: new Date(record.updatedAt).toISOString(),
    lastRunAt: iso(record.lastRunAt),
    nextRunAt: record.state === 'active' ? iso(record.nextRunAt) : undefined,
  };
}

export function presentRun(record: RunRecord): Run {
  return {
    id: record.id,
    monitorId: record.monitorId,
    slot: new Date(record.slot).toISOString(),
    startedAt: new Date(record.startedAt).toISOString(),
    finishedAt: iso(record.finishedAt),
    late: record.late,
    outcome: record.outcome,
    verdict: record.verdict,
    responseTimeMs: record.responseTimeMs,
    reason: record.reason,
    creditsSpent: record.creditsSpent,
    changesJson: record.changesJson,
    resultJson: record.resultJson,
  };
}

export function presentIncident(record: IncidentRecord, now: number): Incident {
  return {
    id: record.id,
    monitorId: record.monitorId,
    state: record.state,
    openedAt: new Date(record.openedAt).toISOString(),
    closedAt: iso(record.closedAt),
    durationSeconds: Math.round(((record.closedAt ?? now) - record.openedAt) / 1000),
    reason: record.reason,
    silenced: record.silenced,
  };
}
