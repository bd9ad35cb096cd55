#!/usr/bin/env node
// The structure figures of issue 32's before → after table, measured on src/ of the working tree or of given commits:
//   node scripts/structure-figures.mjs                 the working tree
//   node scripts/structure-figures.mjs 6dc3ce6 HEAD    each commit's src/ (git archive), a column each
//   --list                                             also the places behind each count, per column
// Definitions (each file is parsed with the TypeScript compiler, syntax only):
//   arrows running back up    imports from a file below the modules (src/ outside src/modules/, bar the composition
//                             root src/app.ts and the entry src/server.ts) or from src/modules/module-deps.ts (the
//                             contract every module receives) into a module's file; type-only imports count
//   fs in non-service module files   files of src/modules/ other than *.service.ts that import fs (the measure)
//   fs in module files, not adapters files of src/modules/ other than *.adapter.ts that import fs (file-rules.ts's)
//   process.env outside config       files of src/ other than src/config.ts that read process.env
//   split-name lists          files of src/ spelling the split names: an array literal or union type holding
//                             'train', 'valid' and 'test'
//   review-state lists        likewise for 'pending', 'approved' and 'rejected'
//   functions over 50 lines   function bodies (declarations, methods, arrows, expressions) spanning more than 50
//                             lines from their first token to their closing brace; nested ones count on their own
//   module files without a role suffix   files of src/modules/<module>/ other than index.ts not named
//                             <name>.<role>.ts with a role of scripts/file-rules.ts
import { execSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, posix } from 'node:path';
import ts from 'typescript';

const ROLES = ['routes', 'service', 'repository', 'schemas', 'adapter', 'logic', 'ports'];
const FS = /^(node:)?fs(\/promises)?$/;

const sourceFiles = (root, dir) =>
  readdirSync(join(root, dir), { withFileTypes: true }).flatMap((e) => {
    const path = posix.join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(root, path);
    return /\.tsx?$/.test(e.name) && !e.name.endsWith('.d.ts') ? [path] : [];
  });

/** The file a relative import names (`./x.js` is ./x.ts), or null for a package or an unknown file. */
function resolveImport(root, from, specifier) {
  if (!specifier.startsWith('.')) return null;
  const base = posix.normalize(posix.join(posix.dirname(from), specifier));
  const candidates = [base.replace(/\.js$/, '.ts'), base.replace(/\.jsx$/, '.tsx'), base, `${base}.ts`, `${base}.tsx`, `${base}/index.ts`];
  return candidates.find((c) => /\.tsx?$/.test(c) && existsSync(join(root, c))) ?? null;
}

/** The string members of an array literal or union type. */
function stringMembers(node) {
  if (ts.isArrayLiteralExpression(node)) return node.elements.filter(ts.isStringLiteral).map((e) => e.text);
  if (ts.isUnionTypeNode(node)) return node.types.filter((t) => ts.isLiteralTypeNode(t) && ts.isStringLiteral(t.literal)).map((t) => t.literal.text);
  return [];
}

export function measure(root) {
  const files = sourceFiles(root, 'src');
  const figures = { arrows: 0, fsOutsideServices: 0, fsOutsideAdapters: 0, envOutsideConfig: 0, splitLists: 0, reviewLists: 0, longFunctions: 0, longest: { lines: 0, name: '' }, withoutRole: 0, lines: 0 };
  /** What each count is made of, for --list. */
  const places = Object.fromEntries(Object.keys(figures).map((k) => [k, []]));
  const count = (key, place) => {
    figures[key]++;
    places[key].push(place);
  };
  for (const file of files) {
    const text = readFileSync(join(root, file), 'utf8');
    figures.lines += text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
    const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, file.endsWith('.tsx') ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
    const inModule = /^src\/modules\/[^/]+\//.test(file);
    const below = file === 'src/modules/module-deps.ts' || (!file.startsWith('src/modules/') && file !== 'src/app.ts' && file !== 'src/server.ts');
    let fs = false, env = false, splits = false, reviews = false;
    const visit = (node) => {
      const specifier =
        (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)
          ? node.moduleSpecifier.text
          : ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword && node.arguments[0] && ts.isStringLiteral(node.arguments[0])
            ? node.arguments[0].text
            : undefined;
      if (specifier !== undefined) {
        if (FS.test(specifier)) fs = true;
        const target = below ? resolveImport(root, file, specifier) : null;
        if (target && /^src\/modules\/[^/]+\//.test(target)) count('arrows', `${file} → ${target}`);
      }
      if (ts.isPropertyAccessExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === 'process' && node.name.text === 'env') env = true;
      const members = stringMembers(node);
      if (['train', 'valid', 'test'].every((s) => members.includes(s))) splits = true;
      if (['pending', 'approved', 'rejected'].every((s) => members.includes(s))) reviews = true;
      if (ts.isFunctionLike(node) && node.body) {
        const lines = source.getLineAndCharacterOfPosition(node.end).line - source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
        const named = node.name ?? (ts.isVariableDeclaration(node.parent) || ts.isPropertyAssignment(node.parent) ? node.parent.name : undefined);
        const name = `${named ? named.getText(source) : '(anonymous)'} (${file})`;
        if (lines > 50) count('longFunctions', `${lines} ${name}`);
        if (lines > figures.longest.lines) figures.longest = { lines, name };
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
    if (fs && file.startsWith('src/modules/') && !file.endsWith('.service.ts')) count('fsOutsideServices', file);
    if (fs && file.startsWith('src/modules/') && !file.endsWith('.adapter.ts')) count('fsOutsideAdapters', file);
    if (env && file !== 'src/config.ts') count('envOutsideConfig', file);
    if (splits) count('splitLists', file);
    if (reviews) count('reviewLists', file);
    const name = file.split('/').pop();
    if (inModule && name !== 'index.ts' && !ROLES.includes(/\.([a-z]+)\.tsx?$/.exec(name)?.[1])) count('withoutRole', file);
  }
  return { ...figures, places };
}

const ROWS = [
  ['lines of src/', (f) => f.lines.toLocaleString('en')],
  ['arrows running back up', (f) => f.arrows],
  ['fs in non-service module files', (f) => f.fsOutsideServices],
  ['fs in module files that are not adapters', (f) => f.fsOutsideAdapters],
  ['`process.env` outside config', (f) => f.envOutsideConfig],
  ['split-name lists', (f) => f.splitLists],
  ['review-state lists', (f) => f.reviewLists],
  ['functions over 50 lines', (f) => f.longFunctions],
  ['longest function (lines)', (f) => `${f.longest.lines}, ${f.longest.name}`],
  ['module files without a role suffix', (f) => f.withoutRole],
];

const list = process.argv.includes('--list');
const commits = process.argv.slice(2).filter((a) => a !== '--list');
const columns = [];
if (commits.length === 0) columns.push(['working tree', measure(process.cwd())]);
for (const commit of commits) {
  if (!/^[\w./^~-]+$/.test(commit)) throw new Error(`not a commit: ${commit}`);
  const dir = mkdtempSync(join(tmpdir(), 'versa-figures-'));
  try {
    execSync(`git archive ${commit} src | tar -x -C ${JSON.stringify(dir)}`, { stdio: ['ignore', 'ignore', 'inherit'] });
    columns.push([commit, measure(dir)]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
console.log(`| figure | ${columns.map(([c]) => c).join(' | ')} |`);
console.log(`|---|${columns.map(() => '---').join('|')}|`);
for (const [label, value] of ROWS) console.log(`| ${label} | ${columns.map(([, f]) => value(f)).join(' | ')} |`);
if (list) {
  for (const [column, f] of columns) {
    console.log(`\n## ${column}`);
    for (const [key, items] of Object.entries(f.places)) if (items.length > 0) console.log(`${key}:\n  ${items.sort().join('\n  ')}`);
  }
}
