import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

/**
 * proto/lf/a2a/v1/a2a.proto as the tests read it, parsed from its text. A field is written as
 * "<number> <label> <type> <name>[ REQ]" where label is `singular`, `optional` (proto3 explicit presence),
 * `repeated`, `map` or `oneof:<name>`.
 */
export interface ParsedField {
  number: number;
  name: string;
  type: string;
  label: string;
  required: boolean;
  deprecated: boolean;
}

interface ParsedBlock {
  name: string;
  body: string;
}

const protoPath = resolve(__dirname, '../../../../proto/lf/a2a/v1/a2a.proto');
export const protoText = stripComments(readFileSync(protoPath, 'utf8'));

function stripComments(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/[^\n]*/g, '');
}

/** Top-level `<keyword> Name { ... }` blocks, with balanced braces. */
export function topLevelBlocks(
  text: string,
  keyword: 'message' | 'enum' | 'service',
): Map<string, string> {
  const blocks = new Map<string, string>();
  const re = new RegExp(`(?:^|\\n)${keyword}\\s+(\\w+)\\s*\\{`, 'g');
  let match: RegExpExecArray | null;
  while ((match = re.exec(text)) !== null) {
    const name = match[1] as string;
    const start = match.index + match[0].length;
    let depth = 1;
    let i = start;
    for (; i < text.length && depth > 0; i++) {
      if (text[i] === '{') {
        depth++;
      } else if (text[i] === '}') {
        depth--;
      }
    }
    if (blocks.has(name)) {
      throw new Error(`duplicate ${keyword} ${name}`);
    }
    blocks.set(name, text.slice(start, i - 1));
  }
  return blocks;
}

function parseFields(block: ParsedBlock): ParsedField[] {
  const fields: ParsedField[] = [];
  let oneof: string | undefined;
  for (const rawLine of block.body.split('\n')) {
    const line = rawLine.trim();
    if (line === '') {
      continue;
    }
    const oneofStart = /^oneof\s+(\w+)\s*\{$/.exec(line);
    if (oneofStart) {
      oneof = oneofStart[1];
      continue;
    }
    if (line === '}') {
      oneof = undefined;
      continue;
    }
    const m =
      /^(optional\s+|repeated\s+)?(map\s*<\s*\w+\s*,\s*[\w.]+\s*>|[\w.]+)\s+(\w+)\s*=\s*(\d+)\s*(\[[^\]]*\])?\s*;$/.exec(
        line,
      );
    if (!m) {
      throw new Error(`${block.name}: unparsed line: ${line}`);
    }
    const modifier = m[1]?.trim();
    const type = (m[2] as string).replace(/\s+/g, '');
    const options = m[5] ?? '';
    const label = oneof
      ? `oneof:${oneof}`
      : type.startsWith('map<')
        ? 'map'
        : (modifier ?? 'singular');
    fields.push({
      number: Number(m[4]),
      name: m[3] as string,
      type,
      label,
      required: /\(google\.api\.field_behavior\)\s*=\s*REQUIRED/.test(options),
      deprecated: /deprecated\s*=\s*true/.test(options),
    });
  }
  return fields;
}

export function describeField(f: ParsedField): string {
  return `${f.number} ${f.label} ${f.type} ${f.name}${f.required ? ' REQ' : ''}`;
}

export const messages = topLevelBlocks(protoText, 'message');
export const enums = topLevelBlocks(protoText, 'enum');
export const services = topLevelBlocks(protoText, 'service');

export function fieldsOf(message: string): ParsedField[] {
  const body = messages.get(message);
  if (body === undefined) {
    throw new Error(`message ${message} not found in a2a.proto`);
  }
  return parseFields({ name: message, body });
}
