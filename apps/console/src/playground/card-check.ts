import type { AgentCard, AgentInterface } from './a2a-model';

/** One line of the card's verdict. */
export interface CardCheck {
  readonly name: string;
  readonly ok: boolean;
  readonly detail: string;
}

const REQUIRED_FIELDS: readonly (keyof AgentCard)[] = [
  'name',
  'description',
  'version',
  'supportedInterfaces',
  'capabilities',
  'defaultInputModes',
  'defaultOutputModes',
  'skills',
];

/**
 * Checks an agent card as a client would before using it (spec digest §4.5, §10.11, §10.12): the REQUIRED
 * fields, interfaces that each name a URL, a binding and a `Major.Minor` version (one JSON-RPC 1.0 interface
 * for the playground to use), and at least one signature whose protected header names `alg` and `kid`.
 * The signature itself is verified by card-signature.ts.
 */
export function checkCard(card: unknown): CardCheck[] {
  const record = isObject(card) ? card : {};
  const missing = REQUIRED_FIELDS.filter((field) => !(field in record));
  const skills = Array.isArray(record['skills']) ? (record['skills'] as unknown[]) : [];
  const badSkills = skills.filter(
    (skill) =>
      !isObject(skill) ||
      !['id', 'name', 'description'].every((k) => typeof skill[k] === 'string') ||
      !Array.isArray(skill['tags']),
  ).length;
  const interfaces = Array.isArray(record['supportedInterfaces'])
    ? (record['supportedInterfaces'] as unknown[])
    : [];
  const badInterfaces = interfaces.filter((entry) => !isInterface(entry)).length;
  const jsonRpc = jsonRpcInterface(record);
  const signatures = Array.isArray(record['signatures']) ? (record['signatures'] as unknown[]) : [];
  const headers = signatures.map(protectedHeader);
  const goodSignatures = headers.filter(
    (header) =>
      header !== null && typeof header['alg'] === 'string' && typeof header['kid'] === 'string',
  );
  return [
    {
      name: 'Required fields',
      ok: missing.length === 0 && badSkills === 0,
      detail:
        missing.length > 0
          ? `missing: ${missing.join(', ')}`
          : badSkills > 0
            ? `${badSkills} skill(s) lack id, name, description or tags`
            : 'all present',
    },
    {
      name: 'Supported interfaces',
      ok: interfaces.length > 0 && badInterfaces === 0 && jsonRpc !== null,
      detail:
        interfaces.length === 0
          ? 'none declared'
          : badInterfaces > 0
            ? `${badInterfaces} interface(s) lack a URL, binding or Major.Minor version`
            : jsonRpc === null
              ? 'no JSON-RPC 1.0 interface'
              : interfaces
                  .filter(isInterface)
                  .map((i) => `${i.protocolBinding} ${i.protocolVersion}`)
                  .join(', '),
    },
    {
      name: 'Signature present',
      ok: goodSignatures.length > 0,
      detail:
        signatures.length === 0
          ? 'the card is not signed'
          : goodSignatures.length === 0
            ? 'no signature has a protected header with alg and kid'
            : goodSignatures
                .map((h) => `${String(h?.['alg'])} key ${String(h?.['kid'])}`)
                .join(', '),
    },
  ];
}

/** The card's first JSON-RPC interface of protocol version 1.0, if any. */
export function jsonRpcInterface(card: unknown): AgentInterface | null {
  const interfaces =
    isObject(card) && Array.isArray(card['supportedInterfaces'])
      ? (card['supportedInterfaces'] as unknown[])
      : [];
  const found = interfaces.find(
    (entry) =>
      isInterface(entry) && entry.protocolBinding === 'JSONRPC' && entry.protocolVersion === '1.0',
  );
  return found === undefined ? null : (found as AgentInterface);
}

function isInterface(entry: unknown): entry is AgentInterface {
  if (
    !isObject(entry) ||
    typeof entry['url'] !== 'string' ||
    typeof entry['protocolBinding'] !== 'string'
  ) {
    return false;
  }
  return (
    typeof entry['protocolVersion'] === 'string' && /^\d+\.\d+$/.test(entry['protocolVersion'])
  );
}

/** The decoded protected header of a JWS signature entry (base64url JSON), or null. */
function protectedHeader(signature: unknown): Record<string, unknown> | null {
  if (
    !isObject(signature) ||
    typeof signature['protected'] !== 'string' ||
    typeof signature['signature'] !== 'string'
  ) {
    return null;
  }
  try {
    const base64 = signature['protected'].replace(/-/g, '+').replace(/_/g, '/');
    const decoded: unknown = JSON.parse(atob(base64.padEnd(Math.ceil(base64.length / 4) * 4, '=')));
    return isObject(decoded) ? decoded : null;
  } catch {
    return null;
  }
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
