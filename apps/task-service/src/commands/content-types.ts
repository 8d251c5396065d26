import { A2aError, type Message } from '@lib/a2a-protocol';

/** Whether `mediaType` matches one of the agent's input modes (`type/subtype`, `type/*` or `*\/*`). */
export function acceptsMediaType(modes: readonly string[], mediaType: string): boolean {
  const wanted = essence(mediaType);
  return modes.some((mode) => {
    const accepted = essence(mode);
    if (accepted === '*/*' || accepted === wanted) {
      return true;
    }
    return accepted.endsWith('/*') && wanted.startsWith(accepted.slice(0, -1));
  });
}

/**
 * ContentTypeNotSupported (spec digest §6, §9.1): a part whose declared media type the hosted agent does not
 * accept. Parts without a media type are left to the agent. An agent that declares no input modes accepts all.
 */
export function assertAcceptedParts(message: Message, modes: readonly string[]): void {
  if (modes.length === 0) {
    return;
  }
  message.parts.forEach((part, index) => {
    if (part.mediaType && !acceptsMediaType(modes, part.mediaType)) {
      throw new A2aError(
        'CONTENT_TYPE_NOT_SUPPORTED',
        `message.parts[${index}] has media type ${part.mediaType}; this agent accepts ${modes.join(', ')}`,
        { mediaType: part.mediaType, accepted: modes.join(',') },
      );
    }
  });
}

function essence(mediaType: string): string {
  return (mediaType.split(';')[0] ?? '').trim().toLowerCase();
}
