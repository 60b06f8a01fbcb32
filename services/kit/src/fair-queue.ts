/**
 * Who waits for a slot of a shared pool: the subject billing counts the caller's rate against (an
 * account, or a client network), and the weight of its plan (a plan may buy a larger share).
 */
export interface Sharer {
  subject: string;
  /** At least 1; a caller with twice the weight gets twice the share. */
  weight: number;
}

/**
 * Whether a caller may wait in the queue: yes; no, its waiters fill its share while others wait
 * too; or no, the queue is full (past twice the depth, or the caller alone filled it).
 */
export type Admission = 'admitted' | 'over-share' | 'full';

interface Waiting<T> {
  sharer: Sharer;
  item: T;
}

/**
 * The queue in front of a shared pool (browser pages, crawl workers), handed out max-min fairly:
 * a freed slot goes to the waiting caller holding the fewest slots for its weight, its earliest
 * waiter first, so one caller's flood cannot keep the pool from another caller that waits. The
 * queue itself is shared the same way: a caller may fill at most its weighted share of the queue's
 * depth among the callers waiting (itself included). A caller alone may use all of it; a newcomer
 * is let in while a flood fills it, up to twice the depth in all (docs/decisions/0261-fair-shares.md).
 */
export class FairQueue<T> {
  private readonly held = new Map<string, number>();
  private readonly waiting: Waiting<T>[] = [];

  constructor(private readonly depth: number) {}

  get length(): number {
    return this.waiting.length;
  }

  /** Slots `subject` holds now. */
  heldBy(subject: string): number {
    return this.held.get(subject) ?? 0;
  }

  /** Whether `sharer` may queue one more waiter (see the class). */
  admission(sharer: Sharer): Admission {
    if (this.depth <= 0 || this.waiting.length >= 2 * this.depth) return 'full';
    let queued = 0;
    const weights = new Map<string, number>([[sharer.subject, weightOf(sharer)]]);
    for (const { sharer: other } of this.waiting) {
      if (other.subject === sharer.subject) queued++;
      else weights.set(other.subject, weightOf(other));
    }
    const total = [...weights.values()].reduce((sum, w) => sum + w, 0);
    const share = Math.max(1, Math.ceil((this.depth * weightOf(sharer)) / total));
    if (queued < share) return 'admitted';
    // Alone, its share is the whole queue: that is the queue being full, not one caller crowding others.
    return weights.size > 1 ? 'over-share' : 'full';
  }

  push(sharer: Sharer, item: T): void {
    this.waiting.push({ sharer, item });
  }

  /** Takes a waiter off the queue (its wait ended); false when it was not there. */
  remove(item: T): boolean {
    const index = this.waiting.findIndex((w) => w.item === item);
    if (index < 0) return false;
    this.waiting.splice(index, 1);
    return true;
  }

  /**
   * The waiter a freed slot goes to, taken off the queue: of the callers waiting, the one holding
   * the fewest slots for its weight (the earliest to have queued on a tie), its earliest waiter.
   */
  next(): Waiting<T> | undefined {
    let best = -1;
    let bestLoad = Number.POSITIVE_INFINITY;
    for (let i = 0; i < this.waiting.length; i++) {
      const { sharer } = this.waiting[i] as Waiting<T>;
      const load = this.heldBy(sharer.subject) / weightOf(sharer);
      if (load < bestLoad) {
        best = i;
        bestLoad = load;
      }
    }
    return best < 0 ? undefined : this.waiting.splice(best, 1)[0];
  }

  /** Counts a slot as held by `subject`; the function returned gives it back (once). */
  hold(subject: string): () => void {
    this.held.set(subject, this.heldBy(subject) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = this.heldBy(subject) - 1;
      if (left > 0) this.held.set(subject, left);
      else this.held.delete(subject);
    };
  }
}

function weightOf(sharer: Sharer): number {
  return Math.max(1, sharer.weight);
}
