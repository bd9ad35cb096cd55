/**
 * The layer rule (issue 12), run by `npm run typecheck` and so by CI:
 *   routes → services → repositories / adapters; nothing imports upward; the lower layers (src/http, src/access,
 *   src/db, src/storage, src/imaging, src/inference, src/formats, src/jobs, src/lib) never import a module;
 *   the web pages never import server code; no import cycles.
 * What a file does (fs, child processes, sharp, onnxruntime, process.env, blob keys, what an entry constructs, a
 * module file's role) is checked by scripts/file-rules.ts, also run by `npm run layers`.
 */
const LOWER = '^src/(http|access|db|storage|imaging|inference|formats|jobs|lib|synthetic)/';
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    { name: 'no-circular', severity: 'error', comment: 'Import cycles make the layers meaningless.', from: {}, to: { circular: true } },
    {
      name: 'lower-layer-imports-module',
      severity: 'error',
      comment: 'src/http, src/access, src/db, src/storage, … sit below the modules; they own interfaces the modules implement.',
      from: { path: LOWER },
      to: { path: '^src/(modules|app\\.ts|server\\.ts)' },
    },
    {
      name: 'module-deps-names-module',
      severity: 'error',
      comment: "module-deps.ts is every module's contract with app.ts: it names no module (an entry declares the shared services it takes, ModuleDeps<…>, and app.ts's SharedServices satisfies them).",
      from: { path: '^src/modules/module-deps\\.ts$' },
      to: { path: '^src/modules/[^/]+/' },
    },
    {
      name: 'repository-imports-upward',
      severity: 'error',
      comment: 'Repositories hold SQL only: no services, routes or module entries.',
      from: { path: '\\.repository\\.ts$' },
      to: { path: '(\\.service|\\.routes|/index)\\.ts$' },
    },
    {
      name: 'service-imports-routes',
      severity: 'error',
      comment: 'Services never import routes or module entries (index.ts is the composition of a module).',
      from: { path: '^src/modules/.+\\.service\\.ts$' },
      to: { path: '^src/modules/.+(\\.routes|/index)\\.ts$' },
    },
    {
      name: 'routes-import-repository',
      severity: 'error',
      comment: 'Routes talk to services only.',
      from: { path: '\\.routes\\.ts$' },
      to: { path: '\\.repository\\.ts$' },
    },
    {
      name: 'module-imports-app',
      severity: 'error',
      comment: 'Only the composition root (src/app.ts) and the entry (src/server.ts) see every module.',
      from: { path: '^src/modules/' },
      to: { path: '^src/(app|server)\\.ts$' },
    },
    {
      name: 'module-entry-imported-by-module',
      severity: 'error',
      comment: 'A module never builds another module: shared pieces come from ModuleDeps, built once in src/app.ts.',
      from: { path: '^src/modules/([^/]+)/' },
      to: { path: '^src/modules/([^/]+)/index\\.ts$', pathNot: '^src/modules/$1/' },
    },
    {
      name: 'web-imports-server',
      severity: 'error',
      comment: 'The pages are a separate program: they talk to the server over HTTP only (types come from clients/typescript/api-types.ts).',
      from: { path: '^web/' },
      to: { path: '^(src|test|scripts)/' },
    },
    {
      name: 'server-imports-web',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^web/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)(node_modules|dist)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'], extensions: ['.ts', '.tsx', '.js', '.mjs'] },
    moduleSystems: ['es6', 'cjs'],
  },
};
