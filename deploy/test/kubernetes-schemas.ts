import { fileURLToPath } from 'node:url';
import { ServiceMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1';
import * as appsV1 from 'kubernetes-models/apps/v1';
import * as autoscalingV2 from 'kubernetes-models/autoscaling/v2';
import * as networkingV1 from 'kubernetes-models/networking.k8s.io/v1';
import * as policyV1 from 'kubernetes-models/policy/v1';
import * as coreV1 from 'kubernetes-models/v1';
import ts from 'typescript';

/** A rendered object, as parsed from YAML. */
export type Manifest = Record<string, any>;
type Model = new (data: Manifest) => { validate(): void };

/**
 * The Kubernetes API's models by apiVersion (kubernetes-models 4.5: the API's OpenAPI schemas of
 * Kubernetes 1.33), each with its module, which also declares the model's type.
 */
const MODELS: Record<string, { module: string; models: Record<string, unknown> }> = {
  v1: { module: 'kubernetes-models/v1', models: coreV1 },
  'apps/v1': { module: 'kubernetes-models/apps/v1', models: appsV1 },
  'autoscaling/v2': { module: 'kubernetes-models/autoscaling/v2', models: autoscalingV2 },
  'policy/v1': { module: 'kubernetes-models/policy/v1', models: policyV1 },
  'networking.k8s.io/v1': { module: 'kubernetes-models/networking.k8s.io/v1', models: networkingV1 },
  'monitoring.coreos.com/v1': {
    module: '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1',
    models: { ServiceMonitor },
  },
};

function modelOf(manifest: Manifest): { module: string; model: Model } {
  const entry = MODELS[manifest.apiVersion];
  const model = entry?.models[manifest.kind] as Model | undefined;
  if (!entry || !model) throw new Error(`no Kubernetes schema for ${manifest.apiVersion} ${manifest.kind}`);
  return { module: entry.module, model };
}

/** Checks a manifest with the model's JSON-schema validator (ajv): types, formats, required fields. */
export function validate(manifest: Manifest): void {
  const { model } = modelOf(manifest);
  new model(manifest).validate();
}

// The models' declarations, parsed once for every check.
const declarations = new Map<string, ts.SourceFile>();
let previous: ts.Program | undefined;

/**
 * Fields the schemas do not know. The validators above accept any extra key (the API's schemas do not
 * forbid them, and the API server drops them), so a typo such as `readinesProbe` would pass them and
 * silently do nothing. The models' declared types, generated from the same schemas, do list every
 * field: each manifest is written as an object literal of its model's type and checked by the
 * TypeScript compiler, whose excess-property check names every unknown key, however deep.
 * Returns one message per unknown field (empty: none).
 */
export function unknownFields(manifests: Manifest[]): string[] {
  // A file that is never written: the compiler host below serves it, resolving imports from here.
  const file = fileURLToPath(new URL('./rendered-manifests.ts', import.meta.url));
  const lines = manifests.map((manifest, i) => {
    const { module } = modelOf(manifest);
    const type = `import type { I${manifest.kind} as T${i} } from '${module}/${manifest.kind}';`;
    return `${type}\nexport const m${i}: T${i} = ${JSON.stringify(manifest)};`;
  });
  const source = lines.join('\n');
  const options: ts.CompilerOptions = {
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    target: ts.ScriptTarget.ES2022,
    types: [],
  };
  const host = ts.createCompilerHost(options);
  const readFile = host.readFile.bind(host);
  const getSourceFile = host.getSourceFile.bind(host);
  host.fileExists = (name) => name === file || ts.sys.fileExists(name);
  host.readFile = (name) => (name === file ? source : readFile(name));
  host.getSourceFile = (name, language, ...rest) => {
    if (name === file) return ts.createSourceFile(name, source, language);
    let parsed = declarations.get(name);
    if (!parsed) {
      parsed = getSourceFile(name, language, ...rest);
      if (parsed) declarations.set(name, parsed);
    }
    return parsed;
  };
  const program = ts.createProgram([file], options, host, previous);
  previous = program;
  return ts.getPreEmitDiagnostics(program).map((diagnostic) => {
    const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, ' ');
    const at = diagnostic.file && diagnostic.start !== undefined ? source.slice(0, diagnostic.start) : '';
    const index = (at.match(/\nexport const m(\d+)/g) ?? []).length - 1;
    const manifest = manifests[Math.max(index, 0)];
    return `${manifest?.kind} ${manifest?.metadata?.name}: ${message}`;
  });
}
