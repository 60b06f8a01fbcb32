import type { StageTiming } from '@webutil/proto/webutil/render/v1/render';

/** The spec's Server-Timing stages, in order; `total` follows them. */
export const SCREENSHOT_STAGES = ['queue', 'page', 'nav', 'net', 'scroll', 'settle', 'encode'] as const;
export const PDF_STAGES = ['queue', 'page', 'nav', 'net', 'scroll', 'settle', 'render'] as const;
export type Stage = (typeof SCREENSHOT_STAGES)[number] | (typeof PDF_STAGES)[number];

/** Charges elapsed time to named stages, one after the other. */
export class StageClock {
  private readonly started: number;
  private last: number;
  private readonly spent = new Map<Stage, number>();

  constructor(private readonly now: () => number = () => performance.now()) {
    this.started = now();
    this.last = this.started;
  }

  /** Ends a stage: the time since the previous stage ended is charged to it. */
  end(stage: Stage): void {
    const at = this.now();
    this.spent.set(stage, (this.spent.get(stage) ?? 0) + (at - this.last));
    this.last = at;
  }

  totalMs(): number {
    return this.now() - this.started;
  }

  /** Every listed stage (0 for those that did not run, such as on a cache hit), then total. */
  timings(stages: readonly Stage[]): StageTiming[] {
    const round = (ms: number) => Math.round(ms * 10) / 10;
    return [
      ...stages.map((stage) => ({ stage, durationMs: round(this.spent.get(stage) ?? 0) })),
      { stage: 'total', durationMs: round(this.totalMs()) },
    ];
  }
}
