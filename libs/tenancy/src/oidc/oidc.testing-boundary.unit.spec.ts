import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = resolve(__dirname, '..', '..', '..', '..');
const testingDir = join(__dirname, 'testing');

/** Source that ships in a build: not a spec, not the test-only lib, not the test identity provider itself. */
function productionFiles(): string[] {
  return ['apps', 'libs']
    .flatMap((top) =>
      readdirSync(join(root, top), { recursive: true, encoding: 'utf8' }).map((file) =>
        join(root, top, file),
      ),
    )
    .filter(
      (file) =>
        file.endsWith('.ts') &&
        !file.endsWith('.spec.ts') &&
        !file.includes(`${sep}node_modules${sep}`) &&
        !file.startsWith(join(root, 'libs', 'testing') + sep) &&
        !file.startsWith(testingDir + sep),
    );
}

/** Relative import specifiers of a file that resolve into the test identity provider. */
function testingImports(file: string): string[] {
  const source = readFileSync(file, 'utf8');
  return [...source.matchAll(/(?:from|import|require)\s*\(?\s*['"](\.[^'"]*)['"]/g)]
    .map((match) => match[1] ?? '')
    .filter((specifier) => {
      const target = resolve(dirname(file), specifier);
      return target === testingDir || target.startsWith(testingDir + sep);
    });
}

describe('oidc/testing', () => {
  it('is imported by tests only: no production file reaches the test identity provider', () => {
    const offenders = productionFiles()
      .filter((file) => testingImports(file).length > 0)
      .map((file) => relative(root, file));
    expect(offenders).toStrictEqual([]);
  });

  it('recognises such an import: the integration spec has one', () => {
    expect(testingImports(join(__dirname, 'jwt.authenticator.int.spec.ts'))).toStrictEqual([
      './testing',
    ]);
  });
});
