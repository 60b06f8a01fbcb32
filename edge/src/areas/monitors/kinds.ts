/**
 * A monitor's kind is one of the operations' routes: its input is validated by that route's own
 * schema, and the RPC request each run sends is built by that route's own `call` (recorded here,
 * not sent), so neither is written twice.
 */
import type { z } from 'zod';
import type { Clients } from '../../clients.js';
import { HttpError } from '../../envelope.js';
import { NEVER_CANCELLED } from '../../grpc-clients.js';
import { issueCode } from '../../rest/common.js';
import { type Caller, NOT_PRICED, type RouteSpec } from '../../route-spec.js';
import { crawlRoutes } from '../crawl/routes.js';
import { metaScanRoutes } from '../meta-scan/routes.js';
import { renderRoutes } from '../render/routes.js';
import { tlsScanRoutes } from '../tls-scan/routes.js';

export const MONITOR_KINDS = ['down-check', 'ssl-scan', 'meta-scan', 'broken-links-crawl', 'screenshot'] as const;
export type MonitorKind = (typeof MONITOR_KINDS)[number];

const OPERATIONS = [...metaScanRoutes, ...tlsScanRoutes, ...crawlRoutes, ...renderRoutes];

/** The route whose operation a monitor of this kind runs. */
export function kindRoute(kind: MonitorKind): RouteSpec {
  const spec = OPERATIONS.find((candidate) => candidate.operation === kind);
  if (!spec) throw new Error(`no route runs ${kind}`);
  return spec;
}

/** The kind's input rules: its route's, less what a scheduled run has no use for (a job's webhookUrl). */
function kindInput(spec: RouteSpec): z.ZodObject {
  return 'webhookUrl' in spec.input.shape ? spec.input.omit({ webhookUrl: true }) : spec.input;
}

/**
 * A GET route reads its input from the query, where every value is text: a monitor's JSON input
 * may give a number or a boolean for such a field, which is read as the query would carry it.
 */
function asQuery(input: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(input).map(([k, v]) => [k, typeof v === 'number' || typeof v === 'boolean' ? String(v) : v]),
  );
}

export interface KindInput {
  /** The input as the route read it (query text for a GET route's fields), JSON. */
  inputJson: string;
  /** The RPC request a run sends, JSON. */
  requestJson: string;
}

class Recorded {
  constructor(readonly request: unknown) {}
}

/** A client whose every RPC records its request and goes no further. */
const recorder = new Proxy({} as Clients, {
  get: () =>
    new Proxy(
      {},
      {
        get: () => (request: unknown) => {
          throw new Recorded(request);
        },
      },
    ),
});

/** Validates a monitor's input for its kind (a 400 naming the field, as the route answers) and builds its request. */
export async function readKindInput(kind: MonitorKind, input: unknown, caller: Caller): Promise<KindInput> {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw new HttpError(400, 'invalid_input', 'input must be an object: the fields of the kind’s own route');
  }
  const spec = kindRoute(kind);
  const given = spec.method === 'GET' ? asQuery(input as Record<string, unknown>) : input;
  const parsed = kindInput(spec).safeParse(given);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.length ? ` (input.${issue.path.join('.')})` : '';
    throw new HttpError(
      400,
      (issue && issueCode(issue)) ?? 'invalid_input',
      `${issue?.message ?? 'invalid input'}${where}`,
    );
  }
  try {
    const options = { requestId: 'monitor', timeoutMs: spec.timeoutMs, signal: NEVER_CANCELLED };
    await spec.call(recorder, parsed.data, options, caller, NOT_PRICED);
  } catch (err) {
    if (err instanceof Recorded) return { inputJson: JSON.stringify(given), requestJson: JSON.stringify(err.request) };
    throw err;
  }
  throw new Error(`the ${kind} route made no call`);
}
