import type { Message } from '@lib/a2a-protocol';

/** The message's text parts joined by newlines (other parts are ignored). */
export function joinedText(message: Message): string {
  return message.parts.flatMap((part) => (part.text === undefined ? [] : [part.text])).join('\n');
}
