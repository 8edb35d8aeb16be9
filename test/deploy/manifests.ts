/**
 * Reads the Kubernetes manifests of deploy/kubernetes (as committed, and as `kubectl kustomize`
 * renders them) and validates each object against its schema with kubernetes-models and
 * @kubernetes-models/prometheus-operator: the maintained models of the API server's OpenAPI and
 * of the operator's CRDs.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { PrometheusRule, ServiceMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1';
import { StatefulSet } from 'kubernetes-models/apps/v1';
import { ConfigMap, Secret, Service } from 'kubernetes-models/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { REPO_ROOT } from '../helpers/shared.js';

export const DEPLOY_DIR = join(REPO_ROOT, 'deploy');
export const KUBERNETES_DIR = join(DEPLOY_DIR, 'kubernetes');
/** kubectl on PATH (Debian package kubectl), or undefined. */
export const KUBECTL = onPath('kubectl');

/** The absolute path of a command on PATH, or undefined. */
export function onPath(name: string): string | undefined {
  const r = spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8', timeout: 10_000 });
  const path = r.status === 0 ? r.stdout.trim() : '';
  return path.startsWith('/') ? path : undefined;
}

/** The parts of an object the tests read; the models check the rest. */
export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
  [key: string]: unknown;
}

interface Model {
  validate(): void;
}

/** apiVersion/kind -> model class; a kind without a model here is an error, never skipped. */
const MODELS: Record<string, new (data: never) => Model> = {
  'apps/v1/StatefulSet': StatefulSet,
  'v1/Service': Service,
  'v1/ConfigMap': ConfigMap,
  'v1/Secret': Secret,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'monitoring.coreos.com/v1/ServiceMonitor': ServiceMonitor,
  'monitoring.coreos.com/v1/PrometheusRule': PrometheusRule,
};

/**
 * Throws with `where` and the schema's message when the object does not validate. The model
 * takes the object as it is (no defaults filled in), so what is checked is what is committed.
 */
export function validateObject(object: KubeObject, where: string): void {
  const key = `${object.apiVersion}/${object.kind}`;
  const Model = MODELS[key];
  if (!Model) throw new Error(`${where}: no schema model for ${key} (add it to MODELS in test/deploy/manifests.ts)`);
  try {
    new Model(object as never).validate();
  } catch (error) {
    throw new Error(`${where}: ${key} ${object.metadata?.name}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** Every YAML document of a text, with errors reported by `where`. */
export function parseObjects(text: string, where: string): KubeObject[] {
  return parseAllDocuments(text).flatMap((doc, index) => {
    if (doc.errors.length > 0) throw new Error(`${where}: document ${index}: ${doc.errors[0]!.message}`);
    const value = doc.toJS() as KubeObject | null;
    return value === null ? [] : [value];
  });
}

export function readKustomization(): { resources: string[]; configMapGenerator: { name: string; files: string[] }[] } {
  const doc = parseObjects(readFileSync(join(KUBERNETES_DIR, 'kustomization.yaml'), 'utf8'), 'kustomization.yaml')[0];
  return doc as unknown as { resources: string[]; configMapGenerator: { name: string; files: string[] }[] };
}

/** The objects of every resource file the kustomization lists, each with its file name. */
export function sourceObjects(): { file: string; object: KubeObject }[] {
  return readKustomization().resources.flatMap((file) =>
    parseObjects(readFileSync(join(KUBERNETES_DIR, file), 'utf8'), file).map((object) => ({ file, object })),
  );
}

/**
 * `kubectl kustomize deploy/kubernetes`, or undefined (with the reason printed once) where
 * kubectl is not installed (Debian package kubectl).
 */
export function renderKustomization(): KubeObject[] | undefined {
  if (!KUBECTL) {
    if (!skipPrinted) console.warn('skipping: kubectl is not installed (Debian package kubectl), the kustomization is not rendered');
    skipPrinted = true;
    return undefined;
  }
  const result = spawnSync(KUBECTL, ['kustomize', KUBERNETES_DIR], { encoding: 'utf8', timeout: 60_000 });
  if (result.status !== 0) throw new Error(`kubectl kustomize ${KUBERNETES_DIR} failed (${result.status}): ${result.stderr}`);
  return parseObjects(result.stdout, 'kubectl kustomize output');
}
let skipPrinted = false;

/** The one object of a kind; fails when there are none or several. */
export function single(objects: readonly KubeObject[], kind: string, name?: string): KubeObject {
  const found = objects.filter((o) => o.kind === kind && (name === undefined || o.metadata.name === name));
  if (found.length !== 1) throw new Error(`expected one ${kind}${name ? ` ${name}` : ''}, found ${found.length}`);
  return found[0]!;
}

/** Whether every key/value of `selector` is among `labels` (a Kubernetes equality selector). */
export function selects(selector: Record<string, string> | undefined, labels: Record<string, string> | undefined): boolean {
  if (!selector || Object.keys(selector).length === 0) return false;
  return Object.entries(selector).every(([key, value]) => labels?.[key] === value);
}
