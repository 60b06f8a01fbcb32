/**
 * A CPU profile of a running process over one stretch of a benchmark, through its inspector (the
 * process started with `--inspect=127.0.0.1:0`): unlike `--cpu-prof`, start-up is left out.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { WebSocket } from 'undici';

export interface InspectorSession {
  /** Starts sampling. */
  start(): Promise<void>;
  /** Stops sampling and writes the profile into `dir` as `<name>.cpuprofile`. */
  stop(dir: string, name: string): Promise<void>;
  close(): void;
}

/** The inspector's address a process printed ("Debugger listening on ws://..."), from its log lines. */
export function inspectorUrl(logs: string[], processName: string): string {
  const line = logs.find((l) => l.startsWith(`[${processName}] Debugger listening on ws://`));
  if (!line) throw new Error(`${processName} printed no inspector address (start it with --inspect=127.0.0.1:0)`);
  return line.slice(line.indexOf('ws://')).trim();
}

export async function connectInspector(url: string): Promise<InspectorSession> {
  const socket = new WebSocket(url);
  await new Promise<void>((resolve, reject) => {
    socket.addEventListener('open', () => resolve(), { once: true });
    socket.addEventListener('error', () => reject(new Error(`no inspector at ${url}`)), { once: true });
  });
  let nextId = 1;
  const waiting = new Map<number, (result: unknown) => void>();
  socket.addEventListener('message', (event) => {
    const message = JSON.parse(String(event.data)) as { id?: number; result?: unknown };
    if (message.id !== undefined) waiting.get(message.id)?.(message.result);
  });
  const send = (method: string, params: object = {}) =>
    new Promise<unknown>((resolve) => {
      const id = nextId++;
      waiting.set(id, resolve);
      socket.send(JSON.stringify({ id, method, params }));
    });
  await send('Profiler.enable');
  return {
    start: async () => {
      await send('Profiler.start');
    },
    stop: async (dir, name) => {
      const { profile } = (await send('Profiler.stop')) as { profile: unknown };
      writeFileSync(path.join(dir, `${name}.cpuprofile`), JSON.stringify(profile));
    },
    close: () => socket.close(),
  };
}
