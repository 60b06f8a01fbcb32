/**
 * SVG badges in the shields.io style (drawn by badge-maker, shields.io's own renderer): a
 * monitor's uptime over a window, its certificate's days left, its broken links. Public and
 * cacheable: a badge shows only the figure, never the monitor's target or account.
 */
import { makeBadge } from 'badge-maker';

export const BADGE_STYLES = ['flat', 'flat-square', 'plastic', 'for-the-badge'] as const;
export type BadgeStyle = (typeof BADGE_STYLES)[number];

/** How long caches may keep a badge: about one short monitor interval (decision 0438). */
export const BADGE_CACHE_CONTROL = 'public, max-age=300, stale-while-revalidate=600';

export type BadgeFigure =
  | { kind: 'uptime'; window: string; percent: number | null }
  | { kind: 'ssl'; daysUntilExpiry: number | null }
  | { kind: 'broken-links'; broken: number | null };

/** Colours as shields.io grades them, from first bound met. */
const UPTIME_COLOURS: [number, string][] = [
  [99.9, 'brightgreen'],
  [99, 'green'],
  [97, 'yellowgreen'],
  [95, 'yellow'],
  [90, 'orange'],
];
const SSL_COLOURS: [number, string][] = [
  [30, 'brightgreen'],
  [14, 'yellow'],
  [7, 'orange'],
];

const colourOf = (value: number, scale: [number, string][]) => scale.find(([bound]) => value >= bound)?.[1] ?? 'red';

/** The label, message and colour a figure shows. */
export function badgeText(figure: BadgeFigure): { label: string; message: string; color: string } {
  switch (figure.kind) {
    case 'uptime':
      return figure.percent === null
        ? { label: `uptime ${figure.window}`, message: 'no data', color: 'lightgrey' }
        : {
            label: `uptime ${figure.window}`,
            message: `${figure.percent}%`,
            color: colourOf(figure.percent, UPTIME_COLOURS),
          };
    case 'ssl': {
      const days = figure.daysUntilExpiry;
      if (days === null) return { label: 'ssl', message: 'no data', color: 'lightgrey' };
      if (days < 0) return { label: 'ssl', message: 'expired', color: 'red' };
      return { label: 'ssl', message: `${days} day${days === 1 ? '' : 's'} left`, color: colourOf(days, SSL_COLOURS) };
    }
    case 'broken-links':
      return figure.broken === null
        ? { label: 'broken links', message: 'no data', color: 'lightgrey' }
        : { label: 'broken links', message: String(figure.broken), color: figure.broken === 0 ? 'brightgreen' : 'red' };
  }
}

/** The badge's SVG document. */
export function badgeSvg(figure: BadgeFigure, style: BadgeStyle = 'flat'): string {
  return makeBadge({ ...badgeText(figure), style });
}
