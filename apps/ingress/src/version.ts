import { A2aError } from '@lib/a2a-protocol';
import { PROTOCOL_VERSION } from './cards/agent-card.builder';

/**
 * A2A-Version negotiation (spec digest §10.1): Major.Minor, patch ignored; a missing or empty value means
 * 0.3, which this 1.0-only platform rejects unless `assumeV1WhenMissing` is set for clients that send none.
 */
export function negotiateVersion(header: string | undefined, assumeV1WhenMissing: boolean): string {
  const raw = (header ?? '').trim();
  if (raw === '') {
    if (assumeV1WhenMissing) {
      return PROTOCOL_VERSION;
    }
    throw versionError('0.3 (no A2A-Version header)');
  }
  const requested = raw.split(',').map((v) => majorMinor(v.trim()));
  if (requested.includes(PROTOCOL_VERSION)) {
    return PROTOCOL_VERSION;
  }
  throw versionError(raw);
}

function majorMinor(version: string): string {
  const match = /^(\d+)\.(\d+)(?:\.\d+)?$/.exec(version);
  return match ? `${Number(match[1])}.${Number(match[2])}` : version;
}

function versionError(requested: string): A2aError {
  return new A2aError(
    'VERSION_NOT_SUPPORTED',
    `A2A-Version ${requested} is not supported; supported: ${PROTOCOL_VERSION}`,
    { supportedVersions: PROTOCOL_VERSION },
  );
}
