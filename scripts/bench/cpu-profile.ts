/**
 * A V8 CPU profile (node --cpu-prof) read back as self time, for the profile scripts
 * (render-profile.ts, quota-profile.ts): by function and by where the code lives.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}

export interface SelfTimes {
  /** The profile file read. */
  file: string;
  /** Milliseconds of self time, idle left out, by `function file:line`. */
  byFunction: Map<string, number>;
  /** The same by place: an npm package, `node core`, or one of our files. */
  byPlace: Map<string, number>;
  busyMs: number;
}

/** The first profile written into `dir`, as self times. */
export function readSelfTimes(dir: string): SelfTimes {
  const name = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
  if (!name) throw new Error(`no CPU profile in ${dir}`);
  const file = path.join(dir, name);
  const profile = JSON.parse(readFileSync(file, 'utf8')) as {
    nodes: ProfileNode[];
    samples: number[];
    timeDeltas: number[];
  };
  const selfMs = new Map<number, number>();
  profile.samples.forEach((id, i) => {
    selfMs.set(id, (selfMs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0) / 1000);
  });
  const byFunction = new Map<string, number>();
  const byPlace = new Map<string, number>();
  let busyMs = 0;
  for (const node of profile.nodes) {
    const ms = selfMs.get(node.id) ?? 0;
    const { functionName, url, lineNumber } = node.callFrame;
    if (functionName === '(idle)') continue;
    busyMs += ms;
    const where = url.replace(/^file:\/\//, '').replace(/^.*node_modules\//, 'npm:');
    const fn = `${functionName || '(anonymous)'} ${path.basename(where)}:${lineNumber + 1}`;
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + ms);
    const place = placeOf(functionName, url, where);
    byPlace.set(place, (byPlace.get(place) ?? 0) + ms);
  }
  return { file, byFunction, byPlace, busyMs };
}

function placeOf(functionName: string, url: string, where: string): string {
  if (!url) return functionName;
  if (url.startsWith('node:')) return 'node core';
  if (!where.startsWith('npm:')) return path.basename(where);
  return where
    .split('/')
    .slice(0, where.startsWith('npm:@') ? 2 : 1)
    .join('/');
}

/** The `n` largest entries, largest first. */
export function largest(times: Map<string, number>, n: number): [string, number][] {
  return [...times].sort((a, b) => b[1] - a[1]).slice(0, n);
}
