/**
 * deploy/kubernetes: every object validates against its schema (kubernetes-models and its
 * prometheus-operator models), as committed and as `kubectl kustomize` renders it, and the objects
 * agree with each other: shard arguments with replicas, Services and the ServiceMonitor with the
 * pods and their port, the PDB with the pods, the ConfigMap with the mounted config path.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { IStatefulSet } from 'kubernetes-models/apps/v1';
import type { IService } from 'kubernetes-models/v1';
import type { IPodDisruptionBudget } from 'kubernetes-models/policy/v1';
import type { IServiceMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1';
import { describe, expect, test } from 'vitest';
import { parse } from 'yaml';
import { DEFAULTS } from '../../src/config/index.js';
import { EXTERNAL_ADDRESS_ENV, parseCli } from '../../src/cli.js';
import {
  DEPLOY_DIR, readKustomization, renderKustomization, selects, single, sourceObjects, validateObject, type KubeObject,
} from './manifests.js';

const rendered = renderKustomization();
const sources = sourceObjects().map((s) => s.object);

function statefulSet(objects: readonly KubeObject[]): IStatefulSet {
  return single(objects, 'StatefulSet') as unknown as IStatefulSet;
}

function container(objects: readonly KubeObject[]) {
  const containers = statefulSet(objects).spec!.template.spec!.containers;
  expect(containers).toHaveLength(1);
  return containers[0]!;
}

/** The value of `--name=value` (or `--name value`) in an argument list. */
function flag(args: readonly string[], name: string): string | undefined {
  for (let i = 0; i < args.length; i++) {
    if (args[i]!.startsWith(`${name}=`)) return args[i]!.slice(name.length + 1);
    if (args[i] === name) return args[i + 1];
  }
  return undefined;
}

describe('deploy/kubernetes schemas', () => {
  test('every resource file of the kustomization validates against its schema', () => {
    const files = sourceObjects();
    expect(files.map((f) => f.object.kind).sort()).toEqual(
      ['PodDisruptionBudget', 'PrometheusRule', 'Service', 'Service', 'ServiceMonitor', 'StatefulSet'],
    );
    for (const { file, object } of files) validateObject(object, file);
  });

  test('the validation rejects what the API server would (it is not a no-op)', () => {
    const sts = structuredClone(single(sources, 'StatefulSet')) as unknown as { spec: { replicas: unknown } };
    sts.spec.replicas = '3';
    expect(() => validateObject(sts as unknown as KubeObject, 'statefulset.yaml')).toThrow(/statefulset\.yaml.*replicas must be integer/);
    const monitor = structuredClone(single(sources, 'ServiceMonitor')) as unknown as { spec: { endpoints: unknown } };
    monitor.spec.endpoints = 'http';
    expect(() => validateObject(monitor as unknown as KubeObject, 'servicemonitor.yaml')).toThrow(/endpoints must be array/);
  });

  test.runIf(rendered)('kubectl kustomize renders objects that all validate, the generated ConfigMap included', () => {
    for (const object of rendered!) validateObject(object, `rendered ${object.kind}`);
    expect(rendered!.map((o) => o.kind).sort()).toEqual(
      ['ConfigMap', 'PodDisruptionBudget', 'PrometheusRule', 'Service', 'Service', 'ServiceMonitor', 'StatefulSet'],
    );
    // The Secret is the operator's (deploy/README.md): the base must not carry one.
    expect(rendered!.filter((o) => o.kind === 'Secret')).toEqual([]);
  });
});

describe('deploy/kubernetes StatefulSet', () => {
  const objects = rendered ?? sources;

  test('shards by ordinal: --shard-from-hostname and --total-shards equal to replicas', () => {
    const sts = statefulSet(objects);
    const args = container(objects).args ?? [];
    expect(args).toContain('--shard-from-hostname');
    expect(flag(args, '--shard')).toBeUndefined();
    expect(sts.spec!.replicas).toBeGreaterThan(0);
    expect(flag(args, '--total-shards')).toBe(String(sts.spec!.replicas));
    // The ordinal comes from the pod name <StatefulSet name>-<N>, which is the pod's hostname.
    expect(sts.spec!.template.spec!.hostname).toBeUndefined();
    expect(sts.spec!.podManagementPolicy).toBe('Parallel');
  });

  test('listens on the exporter default port, named http, which the probes use', () => {
    const c = container(objects);
    const listen = flag(c.args ?? [], '--web.listen-address');
    expect(listen).toBe(`:${DEFAULTS.listenPort}`);
    expect(c.ports).toEqual([{ name: 'http', containerPort: DEFAULTS.listenPort, protocol: 'TCP' }]);
    expect(c.livenessProbe?.httpGet).toEqual({ path: '/-/healthy', port: 'http' });
    expect(c.readinessProbe?.httpGet).toEqual({ path: '/-/ready', port: 'http' });
  });

  test('gives each replica its own stable address for /sd: the pod name under the headless Service', () => {
    const env = container(objects).env ?? [];
    const index = (name: string) => env.findIndex((e) => e.name === name);
    const address = env[index(EXTERNAL_ADDRESS_ENV)]?.value;
    const headless = (objects.filter((o) => o.kind === 'Service') as unknown as IService[]).find((s) => s.spec?.clusterIP === 'None');
    expect(headless).toBeDefined();
    expect(statefulSet(objects).spec!.serviceName).toBe(headless!.metadata!.name);
    expect(address).toBe(`$(POD_NAME).${headless!.metadata!.name}.$(POD_NAMESPACE).svc:${DEFAULTS.listenPort}`);
    // Kubernetes expands $(VAR) only from variables defined before it.
    expect(env[index('POD_NAME')]?.valueFrom?.fieldRef?.fieldPath).toBe('metadata.name');
    expect(env[index('POD_NAMESPACE')]?.valueFrom?.fieldRef?.fieldPath).toBe('metadata.namespace');
    expect(index('POD_NAME')).toBeLessThan(index(EXTERNAL_ADDRESS_ENV));
    expect(index('POD_NAMESPACE')).toBeLessThan(index(EXTERNAL_ADDRESS_ENV));
    // As the pod expands it, the exporter takes it.
    const expanded = address!.replace('$(POD_NAME)', 'flussonic-exporter-1').replace('$(POD_NAMESPACE)', 'monitoring');
    const command = parseCli(['--demo'], { [EXTERNAL_ADDRESS_ENV]: expanded });
    expect(command).toMatchObject({ web: { externalAddress: expanded } });
  });

  test('runs as non-root with a read-only root filesystem and no capabilities', () => {
    const pod = statefulSet(objects).spec!.template.spec!;
    const c = container(objects);
    expect(pod.securityContext?.runAsNonRoot).toBe(true);
    expect(pod.securityContext?.runAsUser).not.toBe(0);
    expect(pod.securityContext?.seccompProfile?.type).toBe('RuntimeDefault');
    expect(pod.automountServiceAccountToken).toBe(false);
    expect(c.securityContext).toMatchObject({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, runAsNonRoot: true });
    expect(c.securityContext?.capabilities?.drop).toEqual(['ALL']);
    expect(c.securityContext?.privileged).toBeUndefined();
  });

  test('has writable volumes for /tmp and the Catena state dir, and the config mounted read-only', () => {
    const pod = statefulSet(objects).spec!.template.spec!;
    const mounts = new Map((container(objects).volumeMounts ?? []).map((m) => [m.mountPath, m]));
    const volume = (path: string) => pod.volumes?.find((v) => v.name === mounts.get(path)?.name);
    const claim = (path: string) => statefulSet(objects).spec!.volumeClaimTemplates?.find((t) => t.metadata?.name === mounts.get(path)?.name);
    for (const path of ['/tmp', '/var/lib/flussonic-exporter']) {
      expect(mounts.get(path)?.readOnly, path).toBeFalsy();
      const v = volume(path);
      expect(v?.emptyDir ?? v?.persistentVolumeClaim ?? claim(path), `${path} has no emptyDir or claim`).toBeDefined();
    }
    const configPath = flag(container(objects).args ?? [], '--config');
    expect(configPath).toBe('/etc/flussonic-exporter/config.yaml');
    const configMount = mounts.get('/etc/flussonic-exporter');
    expect(configMount?.readOnly).toBe(true);
    expect(volume('/etc/flussonic-exporter')?.configMap?.name).toMatch(/^flussonic-exporter-config/);
  });

  test('keeps the Catena state on a claim per replica, not on an emptyDir', () => {
    const sts = statefulSet(objects);
    const mount = (container(objects).volumeMounts ?? []).find((m) => m.mountPath === '/var/lib/flussonic-exporter')!;
    expect(sts.spec!.template.spec!.volumes?.find((v) => v.name === mount.name)).toBeUndefined();
    const template = sts.spec!.volumeClaimTemplates?.find((t) => t.metadata?.name === mount.name);
    expect(template?.spec?.accessModes).toEqual(['ReadWriteOnce']);
    expect(template?.spec?.resources?.requests?.storage).toBeDefined();
    // The claims outlive the pods (the state must): not deleted with the StatefulSet or a scale-down.
    const policy = sts.spec!.persistentVolumeClaimRetentionPolicy;
    expect(policy?.whenDeleted ?? 'Retain').toBe('Retain');
    expect(policy?.whenScaled ?? 'Retain').toBe('Retain');
  });

  test('runs the image of this version (the tag set in kustomization.yaml)', () => {
    const version = (JSON.parse(readFileSync(join(DEPLOY_DIR, '..', 'package.json'), 'utf8')) as { version: string }).version;
    if (rendered) expect(container(objects).image).toBe(`flussonic-exporter:${version}`);
    const images = (readKustomization() as unknown as { images: { name: string; newTag: string }[] }).images;
    expect(images).toEqual([{ name: 'flussonic-exporter', newTag: version }]);
  });

  test('sets resource requests and a memory limit (sized in deploy/README.md)', () => {
    const resources = container(objects).resources;
    expect(resources?.requests?.cpu).toBeDefined();
    expect(resources?.requests?.memory).toBeDefined();
    expect(resources?.limits?.memory).toBeDefined();
    const readme = readFileSync(join(DEPLOY_DIR, 'README.md'), 'utf8');
    for (const value of [resources!.requests!.cpu, resources!.requests!.memory, resources!.limits!.memory]) {
      expect(readme, `deploy/README.md explains ${value}`).toContain(`\`${value}\``);
    }
  });

  test('sets a CPU limit, and as many workers as it has whole CPUs (explained in deploy/README.md)', () => {
    const limit = container(objects).resources?.limits?.cpu;
    expect(limit).toBeDefined();
    const cpus = String(limit).endsWith('m') ? Number(String(limit).slice(0, -1)) / 1000 : Number(limit);
    expect(cpus).toBeGreaterThanOrEqual(1);
    const config = parse(readFileSync(join(DEPLOY_DIR, 'kubernetes', 'config.yaml'), 'utf8')) as { workers?: number };
    expect(config.workers).toBe(Math.floor(cpus));
    expect(readFileSync(join(DEPLOY_DIR, 'README.md'), 'utf8')).toContain(`\`workers: ${config.workers}\``);
  });

  test('reads the password from a Secret that the base does not create and deploy/README.md tells how to create', () => {
    const refs = (container(objects).env ?? []).flatMap((e) => (e.valueFrom?.secretKeyRef ? [e.valueFrom.secretKeyRef] : []));
    expect(refs.length).toBeGreaterThan(0);
    const readme = readFileSync(join(DEPLOY_DIR, 'README.md'), 'utf8');
    for (const ref of refs) {
      expect(ref.optional).toBeFalsy();
      expect(readme).toMatch(new RegExp(`kubectl create secret generic ${ref.name}\\b[^\\n]*--from-literal=${ref.key}=`));
    }
    expect(objects.filter((o) => o.kind === 'Secret')).toEqual([]);
  });
});

describe.runIf(rendered)('deploy/kubernetes objects agree with each other (rendered)', () => {
  const objects = rendered ?? [];
  const podLabels = () => statefulSet(objects).spec!.template.metadata!.labels;
  const services = () => objects.filter((o) => o.kind === 'Service') as unknown as (IService & KubeObject)[];

  test('the StatefulSet mounts the generated ConfigMap', () => {
    const configMap = single(objects, 'ConfigMap');
    const generator = readKustomization().configMapGenerator[0]!;
    expect(configMap.metadata.name).toMatch(new RegExp(`^${generator.name}-[a-z0-9]{10}$`));
    const volumes = statefulSet(objects).spec!.template.spec!.volumes ?? [];
    expect(volumes.map((v) => v.configMap?.name).filter(Boolean)).toEqual([configMap.metadata.name]);
  });

  test('the selector matches the pod template, and the headless Service is the serviceName', () => {
    const sts = statefulSet(objects);
    expect(selects(sts.spec!.selector.matchLabels, podLabels())).toBe(true);
    const headless = services().find((s) => s.metadata.name === sts.spec!.serviceName);
    expect(headless?.spec?.clusterIP).toBe('None');
  });

  test('every Service selects the pods on their http port', () => {
    expect(services()).toHaveLength(2);
    for (const service of services()) {
      expect(selects(service.spec!.selector, podLabels()), service.metadata.name).toBe(true);
      expect(service.spec!.ports).toEqual([{ name: 'http', port: DEFAULTS.listenPort, targetPort: 'http', protocol: 'TCP' }]);
    }
  });

  test('the ServiceMonitor selects exactly one Service (no double scrape) on /metrics', () => {
    const monitor = single(objects, 'ServiceMonitor') as unknown as IServiceMonitor;
    const matched = services().filter((s) => selects(monitor.spec.selector.matchLabels, s.metadata.labels));
    expect(matched.map((s) => s.metadata.name)).toEqual(['flussonic-exporter']);
    expect(monitor.spec.endpoints).toHaveLength(1);
    const endpoint = monitor.spec.endpoints![0]!;
    expect(endpoint.path).toBe(DEFAULTS.metricsPath);
    expect(matched[0]!.spec!.ports!.map((p) => p.name)).toContain(endpoint.port);
    expect(monitor.spec.jobLabel).toBeUndefined();
  });

  test("the scrape job (the Service's name) is the one the alert rules select", () => {
    const job = services().find((s) => s.metadata.labels?.['app.kubernetes.io/component'] === 'metrics')!.metadata.name;
    const rule = single(objects, 'PrometheusRule') as unknown as { spec: { groups: { rules: { expr: string }[] }[] } };
    const selectors = rule.spec.groups.flatMap((g) => g.rules).flatMap((r) => [...r.expr.matchAll(/job=~"([^"]+)"/g)].map((m) => m[1]!));
    expect(selectors.length).toBeGreaterThan(0);
    for (const selector of selectors) expect(job).toMatch(new RegExp(`^(?:${selector})$`));
  });

  test('the PodDisruptionBudget covers the pods and lets at most one shard go', () => {
    const pdb = single(objects, 'PodDisruptionBudget') as unknown as IPodDisruptionBudget;
    expect(selects(pdb.spec!.selector!.matchLabels, podLabels())).toBe(true);
    expect(pdb.spec!.maxUnavailable).toBe(1);
  });
});
