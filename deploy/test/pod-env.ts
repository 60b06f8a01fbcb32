import type { Manifest } from './kubernetes-schemas.js';

/** A Secret's or ConfigMap's entries as text, by name. */
export type Store = Record<string, Record<string, string>>;

/** The rendered ConfigMaps and Secrets by name, plus Secrets that exist beforehand (an existingSecret). */
export function storesOf(manifests: Manifest[], existingSecrets: Store = {}): { configMaps: Store; secrets: Store } {
  const configMaps: Store = {};
  const secrets: Store = { ...existingSecrets };
  for (const m of manifests) {
    if (m.kind === 'ConfigMap') configMaps[m.metadata.name] = { ...m.data };
    if (m.kind === 'Secret') {
      const decoded = Object.entries(m.data ?? {}).map(([k, v]) => [k, Buffer.from(String(v), 'base64').toString()]);
      secrets[m.metadata.name] = { ...Object.fromEntries(decoded), ...m.stringData };
    }
  }
  return { configMaps, secrets };
}

/**
 * The environment the kubelet gives a workload's first container: envFrom first, then env, later
 * entries winning. A reference to a missing Secret, ConfigMap or key that is not optional throws, as
 * the pod would not start (CreateContainerConfigError).
 */
export function podEnv(workload: Manifest, stores: { configMaps: Store; secrets: Store }): Record<string, string> {
  const container = workload.spec.template.spec.containers[0];
  const where = `${workload.kind} ${workload.metadata.name}`;
  const lookUp = (kind: 'configMaps' | 'secrets', ref: Manifest, key?: string): string | Record<string, string> => {
    const store = stores[kind][ref.name];
    if (!store) {
      if (ref.optional) return key === undefined ? {} : '';
      throw new Error(`${where}: no ${kind} ${ref.name}`);
    }
    if (key === undefined) return store;
    if (store[key] === undefined && !ref.optional) throw new Error(`${where}: ${kind} ${ref.name} has no ${key}`);
    return store[key] ?? '';
  };
  const env: Record<string, string> = {};
  for (const source of container.envFrom ?? []) {
    const all = source.configMapRef
      ? lookUp('configMaps', source.configMapRef)
      : lookUp('secrets', source.secretRef as Manifest);
    Object.assign(env, all);
  }
  for (const entry of container.env ?? []) {
    const from = entry.valueFrom;
    if (!from) {
      env[entry.name] = entry.value ?? '';
      continue;
    }
    const ref = from.secretKeyRef ?? from.configMapKeyRef;
    const store = from.secretKeyRef ? stores.secrets[ref.name] : stores.configMaps[ref.name];
    if (ref.optional && store?.[ref.key] === undefined) continue; // an optional key that is absent: unset
    env[entry.name] = lookUp(from.secretKeyRef ? 'secrets' : 'configMaps', ref, ref.key) as string;
  }
  return env;
}
