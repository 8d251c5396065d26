/** The nesting check a request's JSON text passes before it is parsed. */

/**
 * Deepest nesting of arrays and objects any request document may have before it is parsed. No valid request
 * comes close: five levels of messages (envelope, params, message, parts, part) plus a Value of
 * `maxJsonDepth` levels. Refusing deeper text up front keeps a hostile body from costing a deep parse and
 * from overflowing the stack of the recursive `JSON.stringify` further down.
 */
export const MAX_REQUEST_JSON_NESTING = 64;

/**
 * Whether JSON text nests arrays and objects deeper than `maxDepth`, found in one pass without parsing
 * (brackets inside strings do not count). Malformed text is left to the parser to report.
 */
export function jsonNestingExceeds(text: string, maxDepth: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i += 1) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) {
        i += 1; // the escaped character cannot end the string
      } else if (c === QUOTE) {
        inString = false;
      }
    } else if (c === QUOTE) {
      inString = true;
    } else if (c === OPEN_BRACKET || c === OPEN_BRACE) {
      depth += 1;
      if (depth > maxDepth) {
        return true;
      }
    } else if (c === CLOSE_BRACKET || c === CLOSE_BRACE) {
      depth -= 1;
    }
  }
  return false;
}

const QUOTE = '"'.charCodeAt(0);
const BACKSLASH = '\\'.charCodeAt(0);
const OPEN_BRACKET = '['.charCodeAt(0);
const CLOSE_BRACKET = ']'.charCodeAt(0);
const OPEN_BRACE = '{'.charCodeAt(0);
const CLOSE_BRACE = '}'.charCodeAt(0);
