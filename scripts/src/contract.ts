/**
 * The e2e harness's contract check: every response a test receives from the edge is validated
 * against the OpenAPI document the edge serves (generated from the route table). An undeclared
 * status, a missing or extra field, a null where the spec omits, or a missing X-Credits-Remaining /
 * X-Request-Id fails the test that received it.
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

interface Operation {
  /** The content types the route also answers with, typed on their own operations. */
  'x-file-answers'?: { contentTypes: string[] }[];
  responses: Record<
    string,
    {
      $ref?: string;
      headers?: Record<string, { $ref?: string; required?: boolean }>;
      content?: Record<string, unknown>;
    }
  >;
}
interface Document {
  paths: Record<string, Record<string, Operation>>;
  components: { headers: Record<string, { required?: boolean }> };
}

const DOCUMENT_ID = 'openapi.json';
/** The website's alias of /v1. */
const ALIAS = /^\/api(?=\/v1\/)/;

export class ContractViolation extends Error {
  override name = 'ContractViolation';
}

export class Contract {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true });
  private readonly templates: { pattern: RegExp; path: string }[];
  private readonly validators = new Map<string, ValidateFunction>();

  constructor(readonly document: Document) {
    addFormats.default(this.ajv);
    this.ajv.addSchema(document as object, DOCUMENT_ID);
    this.templates = Object.keys(document.paths).map((path) => ({
      path,
      pattern: new RegExp(`^${path.replace(/[.]/g, '\\.').replace(/\{\w+\}/g, '[^/]+')}$`),
    }));
  }

  /** The contract the edge at `edgeUrl` serves. */
  static async load(edgeUrl: string): Promise<Contract> {
    const res = await fetch(`${edgeUrl}/v1/openapi.json`);
    if (!res.ok) throw new Error(`GET /v1/openapi.json answered ${res.status}`);
    return new Contract((await res.json()) as Document);
  }

  /**
   * fetch(), then check(): for a test that calls the edge without the test stack's api() (its own
   * stack, cookies or credentials). Throws a ContractViolation as check() does.
   */
  async fetch(url: string, init: RequestInit = {}): Promise<Response> {
    const res = await fetch(url, init);
    await this.check(init.method ?? 'GET', url, res);
    return res;
  }

  /** Throws a ContractViolation when the response is not one the contract allows for this request. */
  async check(method: string, url: string, res: Response): Promise<void> {
    const { pathname } = new URL(url);
    const path = pathname.replace(ALIAS, '');
    const template = this.templates.find((t) => t.pattern.test(path));
    // /healthz and the like are outside the contract
    if (!template && !path.startsWith('/v1/')) return;
    const what = `${method} ${pathname} answered ${res.status}`;
    const operation = template && this.document.paths[template.path]?.[method.toLowerCase()];
    const declared = operation?.responses[String(res.status)];
    // A route's file answers are typed on their own operations; the route names their types.
    const fileTypes = (operation?.['x-file-answers'] ?? []).flatMap((answer) => answer.contentTypes);
    const types = [...Object.keys(declared?.content ?? {}), ...(res.ok ? fileTypes : [])];
    const type = res.headers.get('content-type')?.split(';')[0]?.trim() ?? '';
    // A file: a download, or a render asked for its file (Accept); its type is one the route
    // declares, and the bytes are the service's business.
    const file =
      declared && (!types.includes('application/json') || (type !== 'application/json' && types.includes(type)));
    if (file) {
      if (!types.includes(type)) throw new ContractViolation(`${what} with Content-Type ${type}, not one of ${types}`);
      this.checkHeaders(what, res, this.requiredHeaders(declared));
      return;
    }
    const text = await res.clone().text();
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new ContractViolation(`${what} with a body that is not JSON: ${text.slice(0, 200)}`);
    }
    if (!template || !operation) {
      // No such route (404) or method (405): still the failure envelope.
      if (res.status !== 404 && res.status !== 405) throw new ContractViolation(`${what}, which no route declares`);
      this.validate(`${what}`, '#/components/schemas/Failure', body);
      this.checkHeaders(what, res, ['X-Credits-Remaining', 'X-Request-Id']);
      return;
    }
    if (!declared) throw new ContractViolation(`${what}, a status ${template.path} does not declare`);
    const operationPointer = `#/paths/${pointerToken(template.path)}/${method.toLowerCase()}`;
    const pointer = `${operationPointer}/responses/${res.status}/content/application~1json/schema`;
    this.validate(what, pointer, body);
    this.checkHeaders(what, res, this.requiredHeaders(declared));
  }

  private requiredHeaders(declared: Operation['responses'][string]): string[] {
    return Object.entries(declared.headers ?? {})
      .filter(([, header]) => header.required ?? this.component(header.$ref)?.required)
      .map(([name]) => name);
  }

  private component(ref: string | undefined) {
    return ref ? this.document.components.headers[ref.split('/').pop() ?? ''] : undefined;
  }

  private validate(what: string, pointer: string, body: unknown): void {
    let validator = this.validators.get(pointer);
    if (!validator) {
      validator = this.ajv.getSchema(`${DOCUMENT_ID}${pointer}`);
      if (!validator) throw new Error(`the contract has no schema at ${pointer}`);
      this.validators.set(pointer, validator);
    }
    if (!validator(body)) {
      const problems = (validator.errors ?? [])
        .slice(0, 5)
        .map((e) => `${e.instancePath || '(body)'} ${e.message}${e.params ? ` ${JSON.stringify(e.params)}` : ''}`);
      const sample = JSON.stringify(body).slice(0, 500);
      throw new ContractViolation(
        `${what} with a body the contract does not allow:\n  ${problems.join('\n  ')}\n  body: ${sample}`,
      );
    }
  }

  private checkHeaders(what: string, res: Response, names: string[]): void {
    const missing = names.filter((name) => !res.headers.has(name));
    if (missing.length) throw new ContractViolation(`${what} without the header(s) ${missing.join(', ')}`);
  }
}

/** A JSON pointer token. */
const pointerToken = (token: string) => token.replace(/~/g, '~0').replace(/\//g, '~1');
