/**
 * An alert in the three shapes it is sent in: the JSON body of the account's signed webhook, a
 * Slack-compatible incoming-webhook message (mrkdwn text), and an email's subject and text. Each
 * says what changed, in the comparison's own lines, and links to the monitor (and the run, the
 * diff image or the status page when there is one).
 */

export type AlertEvent = 'changed' | 'incident.opened' | 'incident.closed';

export interface AlertInput {
  event: AlertEvent;
  /** When it happened, ISO 8601. */
  at: string;
  monitor: { id: string; name: string; kind: string; target: string };
  /** What changed, one sentence each (a comparison's `lines`, or an incident's reason). */
  lines: string[];
  /** The comparison itself (JSON), carried as is in the webhook body. */
  changes?: unknown;
  incident?: { id: string; openedAt: string; closedAt?: string; durationSeconds: number; reason: string };
  links: { monitor: string; run?: string; diffImage?: string; statusPage?: string };
}

export interface AlertMessages {
  webhook: {
    type: `monitor.${AlertEvent}`;
    at: string;
    title: string;
    monitor: AlertInput['monitor'];
    lines: string[];
    changes?: unknown;
    incident?: AlertInput['incident'];
    links: AlertInput['links'];
  };
  slack: { text: string };
  email: { subject: string; text: string };
}

/** "3 h 5 min", "45 s": how long an incident lasted. */
export function formatDuration(seconds: number): string {
  const units: [number, string][] = [
    [86_400, 'd'],
    [3_600, 'h'],
    [60, 'min'],
  ];
  const parts: string[] = [];
  let rest = Math.max(0, Math.round(seconds));
  for (const [size, unit] of units) {
    if (rest < size) continue;
    parts.push(`${Math.floor(rest / size)} ${unit}`);
    rest %= size;
    if (parts.length === 2) return parts.join(' ');
  }
  if (rest || !parts.length) parts.push(`${rest} s`);
  return parts.slice(0, 2).join(' ');
}

function titleOf(input: AlertInput): string {
  const { name, target } = input.monitor;
  switch (input.event) {
    case 'incident.opened':
      return `Down: ${name} (${target})`;
    case 'incident.closed':
      return `Up again: ${name} (${target}) after ${formatDuration(input.incident?.durationSeconds ?? 0)}`;
    default:
      return `Changed: ${name} (${target})`;
  }
}

const LINK_LABELS: Record<keyof AlertInput['links'], string> = {
  monitor: 'Open the monitor',
  run: 'This run',
  diffImage: 'The diff image',
  statusPage: 'Status page',
};

const linksOf = (links: AlertInput['links']) =>
  (Object.keys(LINK_LABELS) as (keyof AlertInput['links'])[]).flatMap((key) =>
    links[key] ? [{ label: LINK_LABELS[key], url: links[key] }] : [],
  );

/** Slack's mrkdwn treats &, < and > as markup: escaped as its docs say. */
const slackEscape = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** The three messages of one alert. */
export function alertMessages(input: AlertInput): AlertMessages {
  const title = titleOf(input);
  const links = linksOf(input.links);
  const webhook: AlertMessages['webhook'] = {
    type: `monitor.${input.event}`,
    at: input.at,
    title,
    monitor: input.monitor,
    lines: input.lines,
    links: input.links,
  };
  if (input.changes !== undefined) webhook.changes = input.changes;
  if (input.incident) webhook.incident = input.incident;

  const slack = {
    text: [
      `*${slackEscape(title)}*`,
      ...input.lines.map((line) => `• ${slackEscape(line.replace(/^- /, ''))}`),
      links.map((link) => `<${slackEscape(link.url)}|${link.label}>`).join(' · '),
    ].join('\n'),
  };
  const email = {
    subject: `[webutil] ${title}`,
    text: [
      title,
      '',
      ...input.lines,
      '',
      `Monitor: ${input.monitor.name} (${input.monitor.kind}, ${input.monitor.target})`,
      `At: ${input.at}`,
      ...links.map((link) => `${link.label}: ${link.url}`),
    ].join('\n'),
  };
  return { webhook, slack, email };
}
