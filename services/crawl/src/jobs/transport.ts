import type { CrawlKind, CrawlProgress, JobError } from '../model.js';
import type { ScanOptions } from '../scan-options.js';
import type { PackedResult } from './store.js';

/**
 * How crawl jobs reach workers and how workers' events reach the job recorder: NATS JetStream in
 * a cluster (nats-transport.ts), an in-process queue and bus on one machine (memory-transport.ts). A done
event carries the result packed once by the worker; neither transport nor store re-encodes it.
 */

/** A job as handed to a worker. */
export interface JobTicket {
  id: string;
  kind: CrawlKind;
  url: string;
  /** A broken-link crawl's checkFragments option (absent: false). */
  checkFragments?: boolean;
  /** The start's LinkOptions (absent: none), headers included: the worker sends them. */
  scan?: ScanOptions;
  /** Tries made before this ticket was queued (a job handed back after a restart). */
  priorAttempts?: number;
}

interface EventBase {
  jobId: string;
  kind: CrawlKind;
  /** Which try of the job, and the event's number within it (for ordering). */
  attempt: number;
  seq: number;
  progress: CrawlProgress;
}

export type CrawlEvent =
  | (EventBase & { type: 'progress' })
  | (EventBase & { type: 'done'; result: PackedResult })
  | (EventBase & { type: 'failed'; error: JobError });

/** A worker's hold on a job. */
export interface Lease {
  /** 1 on the first delivery of the job (the runner counts its tries in the job store). */
  attempt: number;
  /** Tells the queue the job is still being worked on (call well within the ack wait). */
  keepAlive(): void;
  /** Aborts when this worker shuts down; the job then goes back to the queue. */
  signal: AbortSignal;
}

/**
 * What became of a delivery: `done` (or nothing) finishes it (the job ran, or needs no run); `later` hands the
 * job back for a moment, no try counted, as another caller is owed the worker (the transport then
 * offers the worker its next job). Throwing hands the job back for another try.
 */
export type Delivery = 'done' | 'later';
// biome-ignore lint/suspicious/noConfusingVoidType: a handler that returns nothing finished its delivery
export type JobHandler = (ticket: JobTicket, lease: Lease) => Promise<Delivery | void>;

/**
 * How long a job handed back `later` stays out of the queue: long enough that the workers reach
 * the jobs behind it, short enough that it runs soon after its caller's turn comes.
 */
export const LATER_MS = 500;
export type EventHandler = (event: CrawlEvent) => Promise<void>;

export interface CrawlTransport {
  enqueue(ticket: JobTicket): Promise<void>;
  publish(event: CrawlEvent): Promise<void>;
  /** Starts taking jobs, at most `concurrency` at once. */
  work(concurrency: number, handler: JobHandler): void;
  /** Starts recording events. */
  record(handler: EventHandler): void;
  /** Stops taking jobs and events; running jobs are aborted and handed back. */
  close(): Promise<void>;
}

/** The subject an event travels on: `<prefix>.crawl.<kind>.<jobId>.progress|done|failed`. */
export function eventSubject(prefix: string, event: Pick<CrawlEvent, 'kind' | 'jobId' | 'type'>): string {
  return `${prefix}.crawl.${event.kind}.${event.jobId}.${event.type}`;
}
