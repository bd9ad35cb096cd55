// Builds the `versa` command once per test file (or benchmark) the way an install lays it out, without running the
// whole `npm run build`: each file of src/cli is compiled on its own (TypeScript's transpileModule, as tsc emits it;
// the CLI imports nothing else of src/), into <root>/lib/node_modules/versa/dist/cli/, beside the repository's
// package.json, with <root>/bin/versa -> ../lib/node_modules/versa/dist/cli/versa.js as `npm i -g --prefix <root>`
// makes it, and a project <root>/project whose node_modules/.bin/versa is what `npm i versa` there makes (npx's
// local bin).
import { chmod, copyFile, mkdir, readdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import ts from 'typescript';

const REPO = new URL('../../', import.meta.url).pathname;

export interface CliBuild {
  /** The install prefix: bin/versa and lib/node_modules/versa. */
  prefix: string;
  /** The installed package's folder. */
  pkg: string;
  /** The compiled bin itself (what `node dist/cli/versa.js` runs). */
  script: string;
  /** The global bin symlink, <prefix>/bin/versa. */
  globalBin: string;
  /** A project that depends on versa (node_modules/versa, node_modules/.bin/versa): where `npx versa` runs offline. */
  project: string;
}

export async function buildCli(root: string): Promise<CliBuild> {
  const prefix = join(root, 'prefix');
  const pkg = join(prefix, 'lib', 'node_modules', 'versa');
  const out = join(pkg, 'dist', 'cli');
  await mkdir(out, { recursive: true });
  const sources = (await readdir(join(REPO, 'src', 'cli'))).filter((f) => f.endsWith('.ts'));
  for (const file of sources) {
    const source = await readFile(join(REPO, 'src', 'cli', file), 'utf8');
    const { outputText } = ts.transpileModule(source, {
      fileName: file,
      compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext, esModuleInterop: true },
    });
    await writeFile(join(out, file.replace(/\.ts$/, '.js')), outputText);
  }
  const script = join(out, 'versa.js');
  await chmod(script, 0o755);
  await copyFile(join(REPO, 'package.json'), join(pkg, 'package.json'));
  // The package's dependencies (fflate), as an install puts them beside it.
  await symlink(join(REPO, 'node_modules'), join(pkg, 'node_modules'), 'dir');

  await mkdir(join(prefix, 'bin'));
  const globalBin = join(prefix, 'bin', 'versa');
  await symlink('../lib/node_modules/versa/dist/cli/versa.js', globalBin);

  const project = join(root, 'project');
  await mkdir(join(project, 'node_modules', '.bin'), { recursive: true });
  await writeFile(join(project, 'package.json'), JSON.stringify({ name: 'uses-versa', private: true, dependencies: { versa: '0.1.0' } }));
  await symlink(pkg, join(project, 'node_modules', 'versa'), 'dir');
  await symlink('../versa/dist/cli/versa.js', join(project, 'node_modules', '.bin', 'versa'));
  return { prefix, pkg, script, globalBin, project };
}
