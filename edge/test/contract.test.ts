import { readFileSync } from 'node:fs';
import {
  create,
  createFileRegistry,
  type DescField,
  type DescMessage,
  type FileRegistry,
  fromBinary,
} from '@bufbuild/protobuf';
import {
  type FieldDescriptorProto,
  FieldDescriptorProto_Label,
  FieldDescriptorProto_Type,
  FieldDescriptorProtoSchema,
  type FileDescriptorSet,
  FileDescriptorSetSchema,
} from '@bufbuild/protobuf/wkt';
import { AccountMailServiceService } from '@webutil/proto/webutil/billing/v1/account_mail';
import { BillingServiceService } from '@webutil/proto/webutil/billing/v1/billing';
import { PaymentServiceService } from '@webutil/proto/webutil/billing/v1/payments';
import { WebhookServiceService } from '@webutil/proto/webutil/billing/v1/webhooks';
import { BookmarkServiceService } from '@webutil/proto/webutil/bookmark/v1/bookmark';
import { CrawlServiceService } from '@webutil/proto/webutil/crawl/v1/crawl';
import { SiteAuditServiceService } from '@webutil/proto/webutil/crawl/v1/site_audit';
import { MetaScanServiceService } from '@webutil/proto/webutil/metascan/v1/metascan';
import { MonitorServiceService } from '@webutil/proto/webutil/monitor/v1/monitor';
import { MonitorStatusServiceService } from '@webutil/proto/webutil/monitor/v1/status';
import { RenderServiceService } from '@webutil/proto/webutil/render/v1/render';
import { TlsScanServiceService } from '@webutil/proto/webutil/tlsscan/v1/tlsscan';
import { expect } from 'chai';
import { z } from 'zod';
import type { Clients } from '../src/clients.js';
import { provenanceOf } from '../src/rest/from-proto.js';
import type { RouteSpec } from '../src/route-spec.js';
import { routes } from '../src/routes.js';
import { anything, inputOf } from './route-inputs.js';

/** The descriptor set the build generates from the protos (proto/generate.sh). */
const readDescriptors = (): FileDescriptorSet =>
  fromBinary(FileDescriptorSetSchema, readFileSync(new URL('../../proto/gen/descriptors.binpb', import.meta.url)));

const SERVICES: Record<keyof Clients, Record<string, { path: string }>> = {
  accountMail: AccountMailServiceService,
  billing: BillingServiceService,
  bookmark: BookmarkServiceService,
  crawl: CrawlServiceService,
  metaScan: MetaScanServiceService,
  monitor: MonitorServiceService,
  monitorStatus: MonitorStatusServiceService,
  payments: PaymentServiceService,
  render: RenderServiceService,
  siteAudit: SiteAuditServiceService,
  tlsScan: TlsScanServiceService,
  webhooks: WebhookServiceService,
};

/**
 * Inputs a route's `call` reads before its RPC: a monitor's kind and input (validated and recorded as
 * that kind's request), and none on a change (which would read the monitor first).
 */
const GIVEN: Record<string, Record<string, unknown>> = {
  'create-monitor': { kind: 'down-check', input: { url: 'https://example.com/' }, alerts: undefined },
  'update-monitor': { input: undefined, alerts: undefined },
};

/** The RPC a route's `call` makes (service client and method), found by calling it with recording clients. */
async function calledRpc(spec: RouteSpec): Promise<string | undefined> {
  let path: string | undefined;
  const clients = new Proxy({} as Clients, {
    get: (_target, service: keyof Clients) =>
      new Proxy(
        {},
        {
          get: (_client, method: string) => () => {
            path = SERVICES[service]?.[method]?.path;
            // As decoded, a repeated field is an empty list (the bookmark check counts its list to price it);
            // a job read first is done (an audit's PDF reads it, then prints: the answer is the last RPC's).
            return Promise.resolve({ bookmarks: [], status: 'done' });
          },
        },
      ),
  });
  // A call priced by size is priced (as a sandbox call is: nothing held) and goes on to its RPC.
  await spec.call(
    clients,
    inputOf(spec, GIVEN[spec.operation]) as never,
    {} as never,
    anything as never,
    async () => undefined,
  );
  return path;
}

/** An enum's REST names, as proto/write-fields.mjs derives them. */
const restNames = (field: DescField) => {
  const desc = field.enum;
  if (!desc) return [];
  const prefix = `${desc.name.replace(/(?<=[a-z0-9])([A-Z])/g, '_$1').toUpperCase()}_`;
  return desc.values
    .filter((v) => !v.name.endsWith('_UNSPECIFIED'))
    .map((v) => v.name.slice(prefix.length).toLowerCase());
};

function unwrap(schema: z.ZodType): z.ZodType {
  let s = schema;
  while (s instanceof z.ZodOptional || s instanceof z.ZodNullable) s = s.unwrap() as z.ZodType;
  return s;
}

/**
 * Where a REST object and a proto message disagree: a proto field that has no place in the REST
 * object (neither a field, nor spread in, nor left out with a reason), a REST field no proto field
 * carries (nor declared as added by its presenter), a nested object built from another message, a
 * repeated field that is not an array or the reverse, an enum whose values differ.
 */
function drift(schema: z.ZodType, message: DescMessage, path: string): string[] {
  const made = provenanceOf(schema);
  if (!made) return [`${path}: built by hand, not from ${message.typeName}`];
  const problems: string[] = [];
  const shape = schema instanceof z.ZodObject ? (schema.shape as Record<string, z.ZodType>) : {};
  const sourced = new Set(made.added);
  for (const field of message.fields) {
    const where = `${path}: ${message.typeName}.${field.name}`;
    const entry = made.fields[field.jsonName];
    if (!entry) {
      problems.push(`${where} has no place in the REST contract`);
      continue;
    }
    if ('omitted' in entry) continue;
    if (!field.message) {
      if ('rest' in entry) {
        sourced.add(entry.rest);
        problems.push(...valueDrift(shape[entry.rest], field, `${path}.${entry.rest}`));
      } else problems.push(`${where} is not a message, so it cannot be spread or reshaped`);
      continue;
    }
    if ('spread' in entry) {
      for (const name of Object.keys(entry.spread.shape)) sourced.add(name);
      problems.push(...drift(entry.spread, field.message, `${path}(${field.jsonName})`));
    } else if ('reshaped' in entry) {
      problems.push(...drift(entry.reshaped, field.message, `${path}(${field.jsonName})`));
    } else {
      sourced.add(entry.rest);
      problems.push(...valueDrift(shape[entry.rest], field, `${path}.${entry.rest}`));
    }
  }
  if (schema instanceof z.ZodObject) {
    for (const name of Object.keys(shape)) {
      if (!sourced.has(name)) problems.push(`${path}.${name}: no field of ${message.typeName} carries it`);
    }
  }
  return problems;
}

function valueDrift(schema: z.ZodType | undefined, field: DescField, path: string): string[] {
  if (!schema) return [`${path}: missing from the REST object`];
  let value = unwrap(schema);
  if ((field.fieldKind === 'list') !== value instanceof z.ZodArray) {
    return [`${path}: ${field.fieldKind === 'list' ? 'repeated in the proto, not an array' : 'an array of one value'}`];
  }
  if (value instanceof z.ZodArray) value = unwrap(value.element as z.ZodType);
  if (field.message) return drift(value, field.message, path);
  if (field.fieldKind === 'map' && !(value instanceof z.ZodRecord)) return [`${path}: a map, not a record`];
  if (field.enum) {
    const options = value instanceof z.ZodEnum ? value.options : [];
    if (JSON.stringify(options) !== JSON.stringify(restNames(field))) {
      return [`${path}: values ${options.join(', ')}, not the enum's ${restNames(field).join(', ')}`];
    }
  }
  return [];
}

/** Message types reachable from `from` through its message fields. */
function reaches(from: DescMessage, target: string, seen = new Set<string>()): boolean {
  if (from.typeName === target) return true;
  if (seen.has(from.typeName)) return false;
  seen.add(from.typeName);
  return from.fields.some((f) => f.message !== undefined && reaches(f.message, target, seen));
}

/**
 * Every route's answer against the reply of the RPC it calls: its output schema is built from the
 * reply's message (or from one its presenter takes out of it, e.g. the session of a sign-in), and
 * agrees with it field by field (a sibling reply with the same fields, such as the other crawl
 * start's, is held to the same schema).
 */
async function contractDrift(registry: FileRegistry, table: readonly RouteSpec[]): Promise<string[]> {
  const problems: string[] = [];
  for (const spec of table) {
    const name = `${spec.method} ${spec.path}`;
    const made = provenanceOf(spec.output);
    if (!made) {
      problems.push(`${name}: its output is not built from a proto message`);
      continue;
    }
    const path = await calledRpc(spec);
    if (path === undefined) {
      // No RPC (the quota, read from the caller's authorization): its message is the schema's own.
      problems.push(...drift(spec.output, registry.getMessage(made.message) as DescMessage, name));
      continue;
    }
    const [service, method] = path.slice(1).split('/') as [string, string];
    const reply = registry.getService(service)?.methods.find((m) => m.name === method)?.output;
    if (!reply) {
      problems.push(`${name}: ${path} is not in the descriptor set`);
      continue;
    }
    const own = registry.getMessage(made.message) as DescMessage;
    const source = made.message !== reply.typeName && reaches(reply, made.message) ? own : reply;
    problems.push(...drift(spec.output, source, `${name} (${reply.name})`));
  }
  return problems;
}

describe('the REST contract and the protos', () => {
  it('agree for every route: each reply field has a place in the answer, each answer field a source', async () => {
    expect(await contractDrift(createFileRegistry(readDescriptors()), routes)).to.deep.equal([]);
  });

  /** The descriptor set with one message changed, as if its .proto had been edited but not the contract. */
  const edited = (typeName: string, edit: (fields: FieldDescriptorProto[]) => void) => {
    const set = readDescriptors();
    const [pkg, name] = [typeName.slice(0, typeName.lastIndexOf('.')), typeName.slice(typeName.lastIndexOf('.') + 1)];
    const message = set.file.find((f) => f.package === pkg)?.messageType.find((m) => m.name === name);
    if (!message) throw new Error(`no ${typeName}`);
    edit(message.field);
    return createFileRegistry(set);
  };

  it('fails when a proto field has no place in the REST answer', async () => {
    const registry = edited('webutil.metascan.v1.DownCheckResponse', (fields) =>
      fields.push(
        create(FieldDescriptorProtoSchema, {
          name: 'region',
          jsonName: 'region',
          number: 99,
          type: FieldDescriptorProto_Type.STRING,
          label: FieldDescriptorProto_Label.OPTIONAL,
        }),
      ),
    );
    expect(await contractDrift(registry, routes)).to.deep.equal([
      'GET /down-check (DownCheckResponse): webutil.metascan.v1.DownCheckResponse.region ' +
        'has no place in the REST contract',
    ]);
  });

  it('fails when a REST field has no proto field behind it', async () => {
    const registry = edited('webutil.tlsscan.v1.CertValidations', (fields) => {
      fields.splice(
        fields.findIndex((f) => f.name === 'san_valid'),
        1,
      );
    });
    expect(await contractDrift(registry, routes)).to.deep.equal([
      'GET /ssl-scan (SslScanResponse).certValidations.sanValid: ' +
        'no field of webutil.tlsscan.v1.CertValidations carries it',
    ]);
  });

  it('fails when an answer is written by hand instead of from its reply', async () => {
    const [route] = routes.filter((r) => r.path === '/down-check');
    const handWritten = { ...(route as RouteSpec), output: z.strictObject({ url: z.string() }) };
    expect(await contractDrift(createFileRegistry(readDescriptors()), [handWritten])).to.deep.equal([
      'GET /down-check: its output is not built from a proto message',
    ]);
  });

  it('fails when a nested object is built from another message, or a repeated field is not an array', async () => {
    const registry = edited('webutil.crawl.v1.CheckLinksResponse', (fields) => {
      const summary = fields.find((f) => f.name === 'summary');
      const links = fields.find((f) => f.name === 'links');
      if (!summary || !links) throw new Error('CheckLinksResponse changed');
      summary.typeName = '.webutil.crawl.v1.LinkCounts';
      links.label = FieldDescriptorProto_Label.OPTIONAL;
    });
    const problems = await contractDrift(registry, routes);
    expect(problems).to.include('POST /broken-links (CheckLinksResponse).links: an array of one value');
    expect(problems).to.include(
      'POST /broken-links (CheckLinksResponse).summary: ' +
        'webutil.crawl.v1.LinkCounts.total has no place in the REST contract',
    );
  });
});
