/**
 * A replica's run slots shared max-min fairly among accounts (docs/decisions/0484): each slot free in a
 * tick goes to the account holding the fewest runs in flight on this replica, counting those already
 * given in this tick, its most overdue monitor first. One account's flood of due monitors therefore
 * cannot keep another account's monitor waiting for more than the next slot that frees.
 */

/** What the sharing reads of a due monitor. */
export interface DueMonitor {
  id: string;
  /** The owning account (billing's subject). */
  subject: string;
  /** The slot it waits for: the smaller, the more overdue. */
  nextRunAt: number;
}

/**
 * Which of the due monitors get this tick's `room` slots, in the order given. `due` is the most
 * overdue first; `held` is each account's runs in flight. A tie between accounts goes to the one
 * whose next monitor is the more overdue (then to the first seen), so with one account it is the
 * plain most-overdue-first order.
 */
export function fairPicks<T extends DueMonitor>(
  due: readonly T[],
  held: ReadonlyMap<string, number>,
  room: number,
): T[] {
  const queues = new Map<string, T[]>();
  for (const monitor of due) {
    const queue = queues.get(monitor.subject);
    if (queue) queue.push(monitor);
    else queues.set(monitor.subject, [monitor]);
  }
  for (const queue of queues.values()) queue.sort((a, b) => a.nextRunAt - b.nextRunAt);
  const load = new Map<string, number>();
  for (const subject of queues.keys()) load.set(subject, held.get(subject) ?? 0);
  const picks: T[] = [];
  while (picks.length < room) {
    let best: string | undefined;
    for (const [subject, queue] of queues) {
      const next = queue[0];
      if (!next) continue;
      if (best === undefined) {
        best = subject;
        continue;
      }
      const [mine, theirs] = [load.get(subject) ?? 0, load.get(best) ?? 0];
      const bestNext = (queues.get(best) as T[])[0] as T;
      if (mine < theirs || (mine === theirs && next.nextRunAt < bestNext.nextRunAt)) best = subject;
    }
    if (best === undefined) break;
    picks.push((queues.get(best) as T[]).shift() as T);
    load.set(best, (load.get(best) ?? 0) + 1);
  }
  return picks;
}

/** Runs in flight per account, for `fairPicks`. */
export class HeldSlots {
  private readonly held = new Map<string, number>();

  get counts(): ReadonlyMap<string, number> {
    return this.held;
  }

  /** Counts a run of `subject` as in flight; the function returned ends it (once). */
  hold(subject: string): () => void {
    this.held.set(subject, (this.held.get(subject) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.held.get(subject) ?? 1) - 1;
      if (left > 0) this.held.set(subject, left);
      else this.held.delete(subject);
    };
  }
}
