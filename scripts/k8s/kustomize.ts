import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parseAllDocuments } from 'yaml';

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

/**
 * `kubectl kustomize <dir>` (relative to `k8s/`), parsed. kubectl's kustomize warns on stderr about the
 * v2-compatible fields the manifests use; only a non-zero exit is a failure.
 */
export function renderKustomization(relativeDir: string): K8sObject[] {
  let output: string;
  try {
    output = execFileSync('kubectl', ['kustomize', join(k8sDir(), relativeDir)], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      maxBuffer: 16 * 1024 * 1024,
    });
  } catch (error) {
    const { code, stderr } = error as { code?: string; stderr?: string };
    if (code === 'ENOENT') {
      throw new Error(
        'kubectl is not installed (Debian: apt-get install kubernetes-client; .ci/run installs it)',
      );
    }
    throw new Error(`kubectl kustomize ${relativeDir} failed: ${stderr ?? String(error)}`);
  }
  return parseManifests(output, relativeDir);
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
