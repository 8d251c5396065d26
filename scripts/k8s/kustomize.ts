import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';

/** One object of a rendered kustomization, as kubectl prints it. */
export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  [field: string]: unknown;
}

/** The overlays under `k8s/overlays`, each a complete platform. */
export const OVERLAYS = ['dev', 'production'] as const;
export type Overlay = (typeof OVERLAYS)[number];

/** The optional parts under `k8s/components` (kustomize Components) an overlay may add. */
export const COMPONENTS = ['monitoring', 'gateway', 'external-secrets'] as const;
export type Component = (typeof COMPONENTS)[number];

/** The repository's `k8s/` folder, found from this file in `scripts/` or in `dist/scripts/`. */
export function k8sDir(): string {
  let dir = __dirname;
  while (dir !== dirname(dir)) {
    if (existsSync(join(dir, 'k8s', 'base')) && existsSync(join(dir, 'package.json'))) {
      return join(dir, 'k8s');
    }
    dir = dirname(dir);
  }
  throw new Error(`k8s/ not found above ${__dirname}`);
}

/** `kubectl kustomize <dir>` (relative to `k8s/`), parsed; a non-zero exit throws with kubectl's stderr. */
export function renderKustomization(relativeDir: string): K8sObject[] {
  return parseManifests(kustomize(join(k8sDir(), relativeDir), relativeDir), relativeDir);
}

/**
 * An overlay with components added, rendered as an operator's overlay would be: a kustomization of the
 * overlay's namespace whose resources are the overlay and whose components are the given ones. It is written
 * to a temporary folder (kustomize takes only relative paths to other kustomizations) and removed after.
 */
export function renderWithComponents(
  overlay: Overlay,
  components: readonly Component[],
): K8sObject[] {
  const overlayDir = join(k8sDir(), 'overlays', overlay);
  const { namespace } = parse(readFileSync(join(overlayDir, 'kustomization.yaml'), 'utf8')) as {
    namespace: string;
  };
  const dir = mkdtempSync(join(tmpdir(), 'a2a-kustomize-'));
  try {
    const kustomization = {
      namespace,
      resources: [relative(dir, overlayDir)],
      components: components.map((component) =>
        relative(dir, join(k8sDir(), 'components', component)),
      ),
    };
    writeFileSync(join(dir, 'kustomization.yaml'), JSON.stringify(kustomization));
    const source = `overlays/${overlay} + components ${components.join(', ')}`;
    return parseManifests(kustomize(dir, source), source);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function kustomize(dir: string, source: string): string {
  try {
    return execFileSync('kubectl', ['kustomize', dir], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      maxBuffer: 16 * 1024 * 1024,
    });
  } catch (error) {
    const { code, stderr } = error as { code?: string; stderr?: string };
    if (code === 'ENOENT') {
      throw new Error(
        'kubectl is not installed (1.27 or later, with kustomize v5: docs/deploy.md)',
      );
    }
    throw new Error(`kubectl kustomize ${source} failed: ${stderr ?? String(error)}`);
  }
}

/** The objects of a multi-document YAML stream; a syntax error or a document that is no object throws. */
export function parseManifests(text: string, source: string): K8sObject[] {
  return parseAllDocuments(text).flatMap((document, index) => {
    if (document.errors.length > 0) {
      throw new Error(`${source}, document ${index}: ${document.errors[0]?.message ?? ''}`);
    }
    const value: unknown = document.toJS();
    if (value === null || value === undefined) {
      return [];
    }
    if (!isK8sObject(value)) {
      throw new Error(`${source}, document ${index}: not a Kubernetes object`);
    }
    return [value];
  });
}

function isK8sObject(value: unknown): value is K8sObject {
  if (typeof value !== 'object' || value === null) {
    return false;
  }
  const { apiVersion, kind, metadata } = value as Record<string, unknown>;
  return (
    typeof apiVersion === 'string' &&
    typeof kind === 'string' &&
    typeof metadata === 'object' &&
    metadata !== null &&
    typeof (metadata as Record<string, unknown>)['name'] === 'string'
  );
}
