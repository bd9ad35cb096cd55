// Part of the layer rule (npm run layers): rules that read what a file does, not only what it imports from where
// (dependency-cruiser and module-cycles.mjs see the arrows between files). Each file under src/ is parsed with the
// TypeScript compiler (syntax only, no type check) and held to the rules below. test/structure/file-rules.test.ts
// shows each rule firing on a probe file.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

/**
 * What a file under src/modules/<module>/ is, by the suffix before `.ts` (`index.ts` is the module's entry):
 *   routes      the HTTP routes: schemas in, one service call, result out
 *   service     the rules (permissions, state changes), through repositories and adapters
 *   repository  SQL, and nothing else
 *   schemas     TypeBox schemas, the types they give, and their row-to-record mappers
 *   adapter     speaks to something outside the process (files, another server, the model runtime): no rules
 *   logic       pure code: computations, policies and constants, no I/O
 *   ports       interfaces a module needs from other modules, wired by the composition root
 */
export const ROLES = ['routes', 'service', 'repository', 'schemas', 'adapter', 'logic', 'ports'] as const;

export const RULES = {
  'module-file-without-role': 'A module file says its role in its name: index.ts or <name>.<role>.ts, role one of ' + ROLES.join(', ') + '.',
  'module-touches-files': 'Only adapters (*.adapter.ts) touch files in a module; the rest asks an adapter, the BlobStore or src/storage/local-files.ts.',
  'child-process-outside-training': 'Child processes are started only by the trainer runner (src/training/) and the FFmpeg adapter (src/media/).',
  'sharp-outside-imaging': "sharp is used only in src/imaging/ (pixels), src/inference/ (a model's input) and src/synthetic/ (generated test images); the rest calls them.",
  'onnxruntime-outside-inference': 'onnxruntime is used only in src/inference/.',
  'env-outside-config': 'The server reads its environment once, in src/config.ts; the rest gets Config.',
  'hand-built-blob-key': 'Blob keys are built only in src/storage/keys.ts (a template or sum starting projects/, or added onto a key prefix, is a hand-built key).',
  'entry-builds-other-module': "A module's entry never constructs another module's pieces: they come built from ModuleDeps (src/app.ts).",
} as const;
export type RuleName = keyof typeof RULES;

/**
 * Where each rule is broken today, and why. The lead deletes entries as the branches that fix them land; an entry
 * that no longer matches a violation fails the check, so the list can only shrink.
 */
const EXCEPTIONS: Record<RuleName, Record<string, string>> = {
  'module-file-without-role': {},
  'module-touches-files': {},
  'child-process-outside-training': {},
  'sharp-outside-imaging': {},
  'onnxruntime-outside-inference': {},
  'env-outside-config': {
    'src/cli/versa.ts': 'the command-line client: its own program with its own variables (VERSA_URL, VERSA_TOKEN, …), never the server',
  },
  'hand-built-blob-key': {
    'src/modules/maintenance/maintenance.repository.ts': "a LIKE pattern over a project's keys, not a key (storage/keys.ts could offer it)",
  },
  'entry-builds-other-module': {
  },
};

export interface Violation {
  rule: RuleName;
  file: string;
  line: number;
  detail: string;
}

const HOMES: Array<{ rule: RuleName; module: RegExp; home: RegExp }> = [
  { rule: 'child-process-outside-training', module: /^(node:)?child_process$/, home: /^src\/(training|media)\// },
  { rule: 'sharp-outside-imaging', module: /^sharp(\/|$)/, home: /^src\/(imaging|inference|synthetic)\// },
  { rule: 'onnxruntime-outside-inference', module: /^onnxruntime-(node|web|common)(\/|$)/, home: /^src\/inference\// },
];
const FS = /^(node:)?fs(\/promises)?$/;
/** The functions of src/storage/keys.ts that return a prefix: anything added onto one is a key built by hand. */
const KEY_PREFIXES = new Set(['projectBlobPrefix', 'versionPrefix']);

const isProcess = (e: ts.Node) => ts.isIdentifier(e) && e.text === 'process';
/** `process.env`, `process['env']` or `const { env } = process`. */
const readsEnv = (node: ts.Node): boolean =>
  (ts.isPropertyAccessExpression(node) && isProcess(node.expression) && node.name.text === 'env') ||
  (ts.isElementAccessExpression(node) && isProcess(node.expression) && ts.isStringLiteral(node.argumentExpression) && node.argumentExpression.text === 'env') ||
  (ts.isVariableDeclaration(node) && node.initializer !== undefined && isProcess(node.initializer) && ts.isObjectBindingPattern(node.name) &&
    node.name.elements.some((e) => (e.propertyName ?? e.name).getText() === 'env'));

const sourceFiles = (root: string, dir: string): string[] =>
  readdirSync(join(root, dir), { withFileTypes: true }).flatMap((e) => {
    const path = posix.join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(root, path);
    return /\.tsx?$/.test(e.name) && !e.name.endsWith('.d.ts') ? [path] : [];
  });

/** The rules' violations under `root`'s src/, before exceptions. Paths are relative to `root`, with forward slashes. */
export function findViolations(root: string): Violation[] {
  const found: Violation[] = [];
  for (const file of sourceFiles(root, 'src')) {
    const text = readFileSync(join(root, file), 'utf8');
    const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, file.endsWith('.tsx') ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
    const at = (node: ts.Node) => source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
    const report = (rule: RuleName, node: ts.Node | null, detail: string) => found.push({ rule, file, line: node ? at(node) : 1, detail });
    const moduleMatch = /^src\/modules\/([^/]+)\/(.+)$/.exec(file);
    const moduleName = moduleMatch?.[1];
    const name = moduleMatch?.[2];

    if (name !== undefined && name !== 'index.ts') {
      const role = /\.([a-z]+)\.tsx?$/.exec(name)?.[1];
      if (!role || !(ROLES as readonly string[]).includes(role)) report('module-file-without-role', null, name);
    }
    const isEntry = name === 'index.ts';
    /** Local names imported from another module's files (for the entry rule). */
    const fromOtherModule = new Map<string, string>();

    const visit = (node: ts.Node): void => {
      let specifier: string | undefined;
      if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
        specifier = node.moduleSpecifier.text;
        if (ts.isImportDeclaration(node) && isEntry && specifier.startsWith('.')) {
          const target = posix.normalize(posix.join(posix.dirname(file), specifier));
          const other = /^src\/modules\/([^/]+)\//.exec(target)?.[1];
          const names = node.importClause?.namedBindings;
          if (other && other !== moduleName && names && ts.isNamedImports(names)) for (const n of names.elements) fromOtherModule.set(n.name.text, target);
        }
      } else if (ts.isCallExpression(node) && node.arguments.length === 1 && ts.isStringLiteral(node.arguments[0])) {
        const callee = node.expression;
        if (callee.kind === ts.SyntaxKind.ImportKeyword || (ts.isIdentifier(callee) && callee.text === 'require')) specifier = node.arguments[0].text;
      }
      if (specifier !== undefined) {
        if (FS.test(specifier) && moduleName !== undefined && !/\.adapter\.tsx?$/.test(file)) report('module-touches-files', node, specifier);
        for (const home of HOMES) if (home.module.test(specifier) && !home.home.test(file)) report(home.rule, node, specifier);
      }

      if (file !== 'src/config.ts' && readsEnv(node)) report('env-outside-config', node, node.getText(source).slice(0, 80));

      if (file !== 'src/storage/keys.ts') {
        const startsKey = (s: string) => s.startsWith('projects/');
        const isPrefixCall = (e: ts.Expression) => ts.isCallExpression(e) && ts.isIdentifier(e.expression) && KEY_PREFIXES.has(e.expression.text);
        if (ts.isTemplateExpression(node) && (startsKey(node.head.text) || node.templateSpans.some((s) => isPrefixCall(s.expression)))) {
          report('hand-built-blob-key', node, node.getText(source).slice(0, 80));
        } else if ((ts.isNoSubstitutionTemplateLiteral(node) || ts.isStringLiteral(node)) && startsKey(node.text) && !ts.isImportDeclaration(node.parent) && !ts.isExportDeclaration(node.parent)) {
          report('hand-built-blob-key', node, node.getText(source).slice(0, 80));
        } else if (ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.PlusToken && (isPrefixCall(node.left) || isPrefixCall(node.right))) {
          report('hand-built-blob-key', node, node.getText(source).slice(0, 80));
        }
      }

      if (isEntry && ts.isNewExpression(node) && ts.isIdentifier(node.expression) && fromOtherModule.has(node.expression.text)) {
        report('entry-builds-other-module', node, `new ${node.expression.text} (${fromOtherModule.get(node.expression.text)})`);
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return found;
}

/** Violations not excused by EXCEPTIONS, and exceptions that excuse nothing (stale: delete them). */
export function checkFiles(root: string, exceptions = EXCEPTIONS): { violations: Violation[]; stale: Array<{ rule: RuleName; file: string }> } {
  const all = findViolations(root);
  const violations = all.filter((v) => !(v.file in exceptions[v.rule]));
  const stale = (Object.keys(exceptions) as RuleName[]).flatMap((rule) =>
    Object.keys(exceptions[rule]).filter((file) => !all.some((v) => v.rule === rule && v.file === file)).map((file) => ({ rule, file })),
  );
  return { violations, stale };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const root = join(dirname(fileURLToPath(import.meta.url)), '..');
  const { violations, stale } = checkFiles(root);
  for (const v of violations) console.error(`  error ${v.rule}: ${v.file}:${v.line} ${v.detail}\n    ${RULES[v.rule]}`);
  for (const s of stale) console.error(`  error stale-exception: ${s.file} no longer breaks ${s.rule}: delete it from EXCEPTIONS in scripts/file-rules.ts`);
  const excused = Object.values(EXCEPTIONS).reduce((n, e) => n + Object.keys(e).length, 0);
  if (violations.length + stale.length > 0) {
    console.error(`\nx ${violations.length} file-rule violation(s), ${stale.length} stale exception(s)`);
    process.exit(1);
  }
  console.log(`✔ no file-rule violations (${Object.keys(RULES).length} rules over src/; ${excused} listed exceptions)`);
}
