/**
 * How answers are shown: tables and colour on a terminal (none when piped or with NO_COLOR), a live
 * progress bar for jobs on a terminal's stderr, a one-line summary; JSON for machines.
 */
import { SingleBar } from 'cli-progress';
import Table from 'cli-table3';
import pc from 'picocolors';

/** Where the command writes, and how. */
export interface Output {
  json: boolean;
  /** stdout is a terminal: tables and colour. */
  tty: boolean;
  /** stderr is a terminal: a progress bar. */
  progress: boolean;
  colors: ReturnType<typeof pc.createColors>;
}

export function outputFor(json: boolean, color: boolean): Output {
  const noColor = 'NO_COLOR' in process.env && process.env.NO_COLOR !== '';
  const tty = Boolean(process.stdout.isTTY);
  return {
    json,
    tty,
    progress: Boolean(process.stderr.isTTY) && !json,
    colors: pc.createColors(color && tty && !noColor),
  };
}

/** Rows as a table on a terminal, as tab-separated lines when piped. */
export function printTable(out: Output, head: string[], rows: (string | number)[][]): void {
  if (!out.tty) {
    for (const row of rows) process.stdout.write(`${row.join('\t')}\n`);
    return;
  }
  const table = new Table({ head: head.map((h) => out.colors.bold(h)), style: { head: [], border: [] } });
  table.push(...rows.map((row) => row.map(String)));
  process.stdout.write(`${table.toString()}\n`);
}

/** Field: value lines. */
export function printFields(out: Output, fields: [string, unknown][]): void {
  const width = Math.max(...fields.map(([name]) => name.length));
  for (const [name, value] of fields) {
    if (value === undefined) continue;
    process.stdout.write(`${out.colors.dim(name.padEnd(width))}  ${String(value)}\n`);
  }
}

/** The one-line summary, to stderr when stdout carries data (JSON, an export), else to stdout. */
export function summary(out: Output, ok: boolean, text: string, toStderr = false): void {
  const mark = ok ? out.colors.green('✔') : out.colors.red('✖');
  (toStderr || out.json ? process.stderr : process.stdout).write(`${mark} ${text}\n`);
}

/** A job's live progress bar (stderr, terminals only); a no-op elsewhere. */
export function jobProgress(out: Output, label: string) {
  const started = Date.now();
  const bar = out.progress
    ? new SingleBar({
        stream: process.stderr,
        format: `${label} [{bar}] {value}/{total} {detail} | {elapsed}s`,
        hideCursor: true,
        clearOnComplete: false,
      })
    : undefined;
  let running = false;
  return {
    update(value: number, total: number, detail: string) {
      const elapsed = ((Date.now() - started) / 1000).toFixed(0);
      if (!bar) return;
      if (!running) {
        bar.start(Math.max(total, 1), value, { detail, elapsed });
        running = true;
      }
      bar.setTotal(Math.max(total, value, 1));
      bar.update(value, { detail, elapsed });
    },
    stop() {
      if (running) bar?.stop();
    },
    seconds: () => ((Date.now() - started) / 1000).toFixed(1),
  };
}
