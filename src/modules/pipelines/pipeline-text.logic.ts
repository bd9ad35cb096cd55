import { isMap, isSeq, LineCounter, parseDocument, stringify, visit, type Document } from 'yaml';
import { PayloadTooLargeError, ValidationError } from '../../http/errors.js';
import { inputIssues } from '../../http/input-guard.js';
import { LIMITS } from './pipelines.schemas.js';

/** A definition read from text, with what is needed to point at a line for a path inside it. */
export interface ParsedText {
  value: unknown;
  /** Line and column (1-based) of the node at a path, or of its nearest existing parent. */
  locate(path: (string | number)[]): { line: number; column: number } | null;
}

/** Largest expanded document accepted: aliases are counted by the YAML library, the expansion is measured here. */
const MAX_EXPANDED_CHARS = 4 * LIMITS.textBytes;

function syntaxError(message: string, line?: number, column?: number): ValidationError {
  const where = line !== undefined ? ` (line ${line}, column ${column})` : '';
  const issue = { loc: ['body'], msg: `${message}${where}`, type: 'syntax_error', path: '', ...(line !== undefined ? { line, column } : {}) };
  return new ValidationError([issue]);
}

function assertSize(text: string): void {
  if (Buffer.byteLength(text, 'utf8') > LIMITS.textBytes) throw new PayloadTooLargeError(`A pipeline document may be at most ${LIMITS.textBytes / 1024} KiB`);
}

/**
 * Parses a YAML definition. Syntax errors are 422 with line and column; a document whose aliases expand past the
 * limits (a "billion laughs" document) is refused before it is expanded further, one whose anchor holds an alias to
 * itself is refused (it has no JSON form); duplicate keys are errors. Its strings and numbers obey the rule of JSON
 * bodies (no NUL, no control character in a name, no infinite number), which `"\0"` and `.inf` could otherwise dodge.
 */
export function parseYaml(text: string): ParsedText & { document: Document } {
  assertSize(text);
  const lineCounter = new LineCounter();
  const document = parseDocument(text, { lineCounter, uniqueKeys: true, prettyErrors: true });
  if (document.errors.length > 0) {
    const first = document.errors[0];
    const pos = first.linePos?.[0];
    throw syntaxError(`YAML: ${first.message.split('\n')[0].replace(/ at line \d+, column \d+:?$/, '')}`, pos?.line, pos?.col);
  }
  let value: unknown;
  try {
    value = document.toJS({ maxAliasCount: LIMITS.aliases });
  } catch (err) {
    if (err instanceof ReferenceError && err.message.startsWith('Unresolved alias')) throw syntaxError(`YAML: ${err.message}`);
    if (err instanceof ReferenceError || err instanceof RangeError) {
      throw syntaxError(`YAML: aliases expand past the limit of ${LIMITS.aliases} (refused as a resource exhaustion attack)`);
    }
    throw syntaxError(`YAML: ${err instanceof Error ? err.message : String(err)}`);
  }
  let json: string;
  try {
    json = JSON.stringify(value ?? null) ?? '';
  } catch {
    // The only value JSON cannot write here is a cycle: an alias inside the node its anchor names.
    const at = selfReference(document);
    const pos = at ? lineCounter.linePos(at) : undefined;
    throw syntaxError('YAML: an alias refers to a node that contains it (a self-referencing anchor)', pos?.line, pos?.col);
  }
  if (json.length > MAX_EXPANDED_CHARS) throw syntaxError('YAML: the document expands past the size limit');
  const located = (path: (string | number)[]) => locateIn(document, lineCounter, path);
  const issues = inputIssues(value, []).map((issue) => ({ ...issue, loc: ['body', ...issue.loc], path: pathText(issue.loc), ...located(issue.loc) }));
  if (issues.length > 0) throw new ValidationError(issues);
  return { value, document, locate: located };
}

/** Where the first alias inside its own anchor's node starts (its offset in the text). */
function selfReference(document: Document): number | undefined {
  let offset: number | undefined;
  visit(document, {
    Alias(_key, alias, path) {
      // Only an alias under a node anchored with its name can close a cycle; resolving it (a walk) is kept to those.
      if (!path.some((node) => (node as { anchor?: string }).anchor === alias.source)) return undefined;
      if (!path.includes(alias.resolve(document) as never)) return undefined;
      offset = alias.range?.[0];
      return visit.BREAK;
    },
  });
  return offset;
}

/** Line and column (1-based) of the node at a path, or of its nearest existing parent. */
function locateIn(document: Document, lineCounter: LineCounter, path: (string | number)[]): { line: number; column: number } | null {
  for (let n = path.length; n >= 0; n--) {
    const node = document.getIn(path.slice(0, n), true) as { range?: [number, number, number] } | undefined;
    if (node && typeof node === 'object' && node.range) {
      const { line, col } = lineCounter.linePos(node.range[0]);
      return { line, column: col };
    }
    if (n === 0 && (isMap(document.contents) || isSeq(document.contents)) && document.contents.range) {
      const { line, col } = lineCounter.linePos(document.contents.range[0]);
      return { line, column: col };
    }
  }
  return null;
}

/** Parses a JSON body; a syntax error is 422 with the line and column where the parser stopped. */
export function parseJson(text: string): unknown {
  assertSize(text);
  try {
    return JSON.parse(text);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    const position = /at position (\d+)/.exec(message);
    if (position) {
      const before = text.slice(0, Number(position[1]));
      const line = before.split('\n').length;
      throw syntaxError(`JSON: ${message.replace(/ in JSON at position \d+.*$/, '')}`, line, before.length - before.lastIndexOf('\n'));
    }
    // V8 names no position for some errors; JSON is YAML flow syntax, so the YAML parser can say where it broke.
    const lineCounter = new LineCounter();
    const pos = parseDocument(text, { lineCounter }).errors[0]?.linePos?.[0];
    throw syntaxError(`JSON: ${message.split('\n')[0]}`, pos?.line, pos?.col);
  }
}

/** The definition as YAML; `parseYaml` reads it back to the same value. */
export function toYaml(definition: unknown): string {
  return stringify(definition, { lineWidth: 0, aliasDuplicateObjects: false });
}

/** `steps[1].params.model_id` from path segments. */
export function pathText(path: (string | number)[]): string {
  let out = '';
  for (const segment of path) out += typeof segment === 'number' ? `[${segment}]` : out === '' ? segment : `.${segment}`;
  return out;
}
