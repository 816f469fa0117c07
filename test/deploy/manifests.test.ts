import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { ConfigMap, Namespace, Secret, Service } from 'kubernetes-models/v1';
import { Deployment } from 'kubernetes-models/apps/v1';
import { Job } from 'kubernetes-models/batch/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { ScaledObject } from '@kubernetes-models/keda/keda.sh/v1alpha1';
import { WorkerPatterns } from '@app/contracts';
import { DELIVERY_QUEUE } from '@app/webhooks/delivery/delivery-queue';
import { RECOVERY_QUEUE } from '@app/webhooks/delivery/recovery';
import { APP_ROLES } from '@app/persistence';
import { AppName, APPS } from '../../scripts/lib/launcher';
import { repoRoot } from '../../scripts/lib/processes';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Obj = Record<string, any>;

const root = repoRoot();
const K8S = join(root, 'deploy', 'k8s');

/** Every kind the manifests may hold, with the model that validates it against the Kubernetes (or KEDA) schema. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- each model takes its own object type; the documents are checked by validate()
type ModelClass = new (data: any) => { validate(): void };
const MODELS: Record<string, ModelClass> = {
  'v1/ConfigMap': ConfigMap,
  'v1/Secret': Secret,
  'v1/Service': Service,
  'v1/Namespace': Namespace,
  'apps/v1/Deployment': Deployment,
  'batch/v1/Job': Job,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'autoscaling/v2/HorizontalPodAutoscaler': HorizontalPodAutoscaler,
  'keda.sh/v1alpha1/ScaledObject': ScaledObject,
};

/** The queues each worker consumes or feeds itself: what its autoscaler must watch. */
const WORKER_QUEUES: Record<Exclude<AppName, 'api' | 'console' | 'admin'>, string[]> = {
  tokenizer: [...WorkerPatterns.tokenizer],
  settlement: [...WorkerPatterns.settlement],
  notifier: [...WorkerPatterns.notifier, DELIVERY_QUEUE, RECOVERY_QUEUE],
};

/**
 * The longest a unit of in-flight work takes with the default settings, which the drain on SIGTERM
 * (libs/platform/src/shutdown.ts) waits for: the api's longest request (a sale waits up to
 * SALE_SYNC_WAIT_MS / REPLY_TIMEOUT_MS, 10 s), a console page (its statements, 5 s each at most), a
 * tokenizer job (ACQUIRER_TIMEOUT_MS 3 s and OPERATION_WAIT_MS 5 s), a settlement job (a few
 * statements, bounded by the 10 s job lock), a webhook attempt (WEBHOOK_TIMEOUT_MS 15 s). The grace
 * period must cover preStop + this + closing.
 */
// The admin app's drain waits for the commands running (ADMIN_COMMAND_TIMEOUT_MS bounds them; a
// deploy waits this long for the ordinary ones, and a longer one is stopped and said to be).
const DRAIN_S: Record<AppName, number> = { api: 10, console: 10, tokenizer: 8, settlement: 10, notifier: 15, admin: 60 };
const CLOSE_MARGIN_S = 10;

function yamlFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return yamlFiles(path);
    return /\.ya?ml$/.test(name) ? [path] : [];
  });
}

function parse(file: string): Obj[] {
  const docs = parseAllDocuments(readFileSync(file, 'utf8'));
  for (const doc of docs) if (doc.errors.length) throw new Error(`${relative(root, file)}: ${doc.errors[0].message}`);
  return docs.map((d) => d.toJS() as Obj).filter((d) => d !== null);
}

interface Kustomization {
  file: string;
  resources: string[];
  patches: string[];
}

const kustomizations: Kustomization[] = yamlFiles(K8S)
  .filter((f) => basename(f) === 'kustomization.yaml')
  .map((file) => {
    const [k] = parse(file);
    const at = (p: string) => resolve(dirname(file), p);
    return {
      file,
      resources: ((k.resources ?? []) as string[]).map(at),
      patches: ((k.patches ?? []) as { path?: string }[]).filter((p) => p.path).map((p) => at(p.path!)),
    };
  });

/** The objects of the base, by kind and name. */
const base = kustomizations.find((k) => relative(K8S, k.file) === join('base', 'kustomization.yaml'))!;
const objects: Obj[] = base.resources.flatMap(parse);
const find = (kind: string, name: string) => objects.find((o) => o.kind === kind && o.metadata?.name === name);

/** Keys an app's configuration reads: quoted upper-case names in its config folder and the shared base config. */
function keysReadBy(sources: string[]): { read: Set<string>; requiredKeys: Set<string> } {
  const text = sources.map((f) => readFileSync(join(root, f), 'utf8')).join('\n');
  const read = new Set([...text.matchAll(/'([A-Z][A-Z0-9_]{2,})'/g)].map((m) => m[1]));
  const requiredKeys = new Set(
    [...text.matchAll(/(?:readKeyVariable\(r, base, |readKeyring\(r, base, |keyring\()'([A-Z][A-Z0-9_]+)'/g)].map((m) => m[1]),
  );
  return { read, requiredKeys };
}

const configOf = (app: AppName | 'cli') =>
  readdirSync(join(root, 'apps', app, 'src', 'config'))
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.spec.ts'))
    .map((f) => join('apps', app, 'src', 'config', f));
// The admin app runs the operator CLI: what the CLI reads is its configuration too (its settings,
// and the webhook secrets' key ring the merchant and webhook commands seal with).
const ADMIN_RUNS = [...configOf('cli'), 'apps/cli/src/merchants/merchant.commands.ts'];
// The web apps read their limits and proxies through the HTTP edge's readers.
const WEB_EDGE = ['libs/http/src/edge-config.ts'];
const configSources = (app: AppName) => [
  ...configOf(app),
  ...(app === 'admin' ? ADMIN_RUNS : []),
  ...(app === 'api' || app === 'console' ? WEB_EDGE : []),
  'libs/platform/src/env.ts',
];

function containerOf(deployment: Obj): Obj {
  const containers = deployment.spec.template.spec.containers as Obj[];
  expect(containers).toHaveLength(1);
  return containers[0];
}

/** A probe's port as a number (it may name a container port). */
function probePort(container: Obj, port: number | string): number {
  return typeof port === 'number' ? port : (container.ports as Obj[]).find((p) => p.name === port)?.containerPort;
}

function queuesOf(query: string): string[] {
  const m = /queue=~"([^"]+)"/.exec(query);
  if (!m) throw new Error(`query names no queues: ${query}`);
  // PromQL unescapes \\ to \ in a string; the regex then has \. for a dot.
  return m[1].split('|').map((q) => q.replace(/\\\\\./g, '.').replace(/\\\./g, '.'));
}

/**
 * deploy/k8s (issue 17, item 4): every manifest parses, is part of a kustomization, and is a valid
 * object of its kind; each app's Deployment probes /health where the app serves it, drains within
 * its grace period, reads only its own settings and secrets; each worker has a queue-driven
 * autoscaler and each app a disruption budget.
 */
describe('Kubernetes manifests', () => {
  it('lists every file in a kustomization, and every listed file exists', () => {
    const listed = new Set<string>();
    for (const k of kustomizations) {
      for (const path of [...k.resources, ...k.patches]) {
        expect({ in: relative(root, k.file), path: relative(root, path), exists: existsSync(path) }).toMatchObject({ exists: true });
        if (statSync(path).isDirectory()) {
          expect({
            in: relative(root, k.file),
            dir: relative(root, path),
            hasKustomization: existsSync(join(path, 'kustomization.yaml')),
          }).toMatchObject({
            hasKustomization: true,
          });
        } else {
          listed.add(path);
        }
      }
    }
    const unlisted = yamlFiles(K8S).filter((f) => basename(f) !== 'kustomization.yaml' && !listed.has(f));
    expect(unlisted.map((f) => relative(root, f))).toEqual([]);
    expect(kustomizations.map((k) => relative(K8S, k.file)).sort()).toEqual([
      'base/kustomization.yaml',
      'overlays/example/kustomization.yaml',
    ]);
  });

  it('holds only known kinds, each valid against its schema, each name once', () => {
    const files = kustomizations.flatMap((k) => k.resources.filter((r) => !statSync(r).isDirectory()));
    const seen = new Set<string>();
    let count = 0;
    for (const file of files) {
      for (const doc of parse(file)) {
        const key = `${doc.apiVersion}/${doc.kind}`;
        const Model = MODELS[key];
        expect({ file: relative(root, file), kind: key, known: Boolean(Model) }).toMatchObject({ known: true });
        expect(() => new Model(doc).validate()).not.toThrow();
        const id = `${key}/${doc.metadata?.name}`;
        expect(seen.has(id)).toBe(false);
        seen.add(id);
        count++;
      }
    }
    expect(count).toBeGreaterThanOrEqual(20);
  });

  it('a schema violation is caught (the validation is real)', () => {
    const deployment = structuredClone(find('Deployment', 'api')!);
    deployment.spec.template.spec.containers[0].ports[0].containerPort = '3000';
    expect(() => new Deployment(deployment).validate()).toThrow(/containerPort must be integer/);
    const scaled = structuredClone(find('ScaledObject', 'tokenizer')!);
    delete scaled.spec.scaleTargetRef;
    expect(() => new MODELS['keda.sh/v1alpha1/ScaledObject'](scaled).validate()).toThrow(/scaleTargetRef/);
  });

  describe.each(APPS.map((a) => [a.name, a] as const))('%s', (name, spec) => {
    const deployment = () => find('Deployment', name)!;

    it('probes /health (readiness) and /live (liveness) on the port the app serves them on', () => {
      const d = deployment();
      expect(d).toBeDefined();
      const c = containerOf(d);
      const config = find('ConfigMap', `${name}-config`)!.data as Record<string, string>;
      // The port the app listens on, from its own settings, and the launchers' default for it.
      const port = Number(config[spec.portVariable]);
      expect(port).toBe(spec.defaultPort);
      // Reachable from the kubelet and Prometheus: not loopback.
      expect(config[spec.portVariable === 'PORT' ? 'HOST' : 'HEALTH_HOST']).toBe('0.0.0.0');
      // Readiness follows Postgres and Redis; liveness only the process, so an outage of either
      // takes replicas out of service without restarting them all at once.
      expect(c.readinessProbe?.httpGet?.path).toBe('/health');
      expect(c.livenessProbe?.httpGet?.path).toBe('/live');
      for (const probe of [c.readinessProbe, c.livenessProbe]) expect(probePort(c, probe.httpGet.port)).toBe(port);
      expect(d.spec.template.metadata.annotations).toMatchObject({ 'prometheus.io/port': String(port), 'prometheus.io/path': '/metrics' });
      expect(c.command).toEqual(['node', `dist/apps/${name}/src/main.js`]);
      // The selector picks this template's pods.
      expect(d.spec.template.metadata.labels).toMatchObject(d.spec.selector.matchLabels);
    });

    it('drains within its grace period (preStop, then the SIGTERM drain)', () => {
      const d = deployment();
      const c = containerOf(d);
      const preStop = c.lifecycle?.preStop?.exec?.command as string[] | undefined;
      const preStopS = preStop ? Number(preStop[1]) : 0;
      // The api and the console are behind a Service: each keeps serving while the endpoints drop it.
      if (name === 'api' || name === 'console') expect(preStop?.[0]).toBe('sleep');
      if (preStop) expect(preStop).toEqual(['sleep', String(preStopS)]);
      expect(d.spec.template.spec.terminationGracePeriodSeconds).toBeGreaterThanOrEqual(preStopS + DRAIN_S[name] + CLOSE_MARGIN_S);
    });

    it('reads its settings and secrets from its own ConfigMap and Secret, holding only keys it reads', () => {
      const c = containerOf(deployment());
      const sources = (c.envFrom as Obj[]).map((e) => e.configMapRef?.name ?? e.secretRef?.name);
      expect(sources).toEqual(['gateway-common', `${name}-config`, `${name}-secrets`]);
      // No other Deployment uses this app's ConfigMap or Secret.
      for (const other of objects.filter((o) => o.kind === 'Deployment' && o.metadata.name !== name)) {
        const theirs = (containerOf(other).envFrom as Obj[]).map((e) => e.configMapRef?.name ?? e.secretRef?.name);
        expect(theirs).not.toContain(`${name}-secrets`);
        expect(theirs).not.toContain(`${name}-config`);
      }
      const { read, requiredKeys } = keysReadBy(configSources(name));
      const keys = [
        ...Object.keys(find('ConfigMap', 'gateway-common')!.data),
        ...Object.keys(find('ConfigMap', `${name}-config`)!.data),
        ...Object.keys(find('Secret', `${name}-secrets`)!.stringData),
      ];
      expect(keys.filter((k) => !read.has(k))).toEqual([]);
      // Every key the app cannot start without in production is in its Secret.
      const secretKeys = Object.keys(find('Secret', `${name}-secrets`)!.stringData);
      expect([...requiredKeys].filter((k) => !secretKeys.includes(k))).toEqual([]);
      expect(secretKeys).toContain('DATABASE_URL');
      // Its own database role (libs/persistence/src/roles.ts).
      expect(find('Secret', `${name}-secrets`)!.stringData.DATABASE_URL).toMatch(new RegExp(`^postgres://${APP_ROLES[name]}[@:]`));
      // The key values are never in the repository.
      for (const k of requiredKeys) expect(find('Secret', `${name}-secrets`)!.stringData[k]).toBe('');
    });

    it('has a disruption budget and an autoscaler', () => {
      const pdb = find('PodDisruptionBudget', name)!;
      expect(pdb.spec.selector.matchLabels).toEqual(deployment().spec.selector.matchLabels);
      expect(pdb.spec.maxUnavailable ?? pdb.spec.minAvailable).toBeDefined();
      if (name === 'admin' || name === 'console') {
        // A few operators' commands, or operators' and merchants' pages: two replicas for availability, nothing to scale on.
        expect(deployment().spec.replicas).toBe(2);
        expect(objects.filter((o) => o.spec?.scaleTargetRef?.name === name)).toEqual([]);
        return;
      }
      if (name === 'api') {
        const hpa = find('HorizontalPodAutoscaler', 'api')!;
        expect(hpa.spec.scaleTargetRef).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name: 'api' });
        return;
      }
      const scaled = objects.filter((o) => o.kind === 'ScaledObject' && o.spec.scaleTargetRef.name === name);
      expect(scaled).toHaveLength(1);
      const triggers = scaled[0].spec.triggers as Obj[];
      expect(triggers.map((t) => t.type)).toEqual(['prometheus', 'prometheus']);
      const metrics = triggers.map((t) => /^(?:sum\(max by \(queue\) \(|max\()([a-z_]+)\{/.exec(t.metadata.query)?.[1]);
      expect(metrics).toEqual(['queue_waiting_jobs', 'queue_oldest_waiting_age_seconds']);
      for (const t of triggers) expect(queuesOf(t.metadata.query).sort()).toEqual([...WORKER_QUEUES[name]].sort());
      expect(scaled[0].spec.minReplicaCount).toBeGreaterThanOrEqual(2);
    });
  });

  it("runs the migration as the owner, with the role passwords and SECRETS_KEKS and nothing of the apps' keys", () => {
    const job = find('Job', 'migrate')!;
    const c = job.spec.template.spec.containers[0];
    expect(c.command).toEqual(['node', 'dist/libs/persistence/src/migrate.js']);
    const keys = Object.keys(find('Secret', 'migrate-secrets')!.stringData).sort();
    expect(keys).toEqual(
      [
        'DATABASE_URL',
        'SECRETS_KEKS',
        'DB_PASSWORD_API',
        'DB_PASSWORD_CONSOLE',
        'DB_PASSWORD_TOKENIZER',
        'DB_PASSWORD_SETTLEMENT',
        'DB_PASSWORD_NOTIFIER',
        'DB_PASSWORD_OPERATOR',
        'DB_PASSWORD_VIEWER',
        'DB_PASSWORD_BREAKGLASS',
      ].sort(),
    );
    // The names the migration runner reads the passwords from (ROLE_PASSWORD_VARIABLES).
    const roles = readFileSync(join(root, 'libs/persistence/src/role-settings.ts'), 'utf8');
    for (const k of keys.filter((k) => k.startsWith('DB_PASSWORD_'))) expect(roles).toContain(`'${k}'`);
  });

  const kubectl = spawnSync('kubectl', ['version', '--client'], { encoding: 'utf8' }).status === 0;
  (kubectl ? it : it.skip).each(['base', 'overlays/example'])(
    'kubectl kustomize builds %s, and every object it renders is valid',
    (dir) => {
      const run = spawnSync('kubectl', ['kustomize', join(K8S, dir)], { encoding: 'utf8', timeout: 60_000 });
      expect(run.stderr).toBe('');
      expect(run.status).toBe(0);
      const rendered = parseAllDocuments(run.stdout).map((d) => d.toJS() as Obj);
      for (const doc of rendered) expect(() => new MODELS[`${doc.apiVersion}/${doc.kind}`](doc).validate()).not.toThrow();
      expect(rendered.filter((d) => d.kind === 'ScaledObject')).toHaveLength(3);
    },
  );
});
