// `versa` however it is installed (issue 31: behind a symlinked bin it printed nothing and exited 0): through the
// symlink a global install makes (<prefix>/bin/versa -> ../lib/node_modules/versa/dist/cli/versa.js), through a
// project's node_modules/.bin, through `npx` offline (nothing downloaded), and with node on the file itself. No server.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readlink, rm } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { TimeoutError, waitUntil } from '../../src/cli/context.js';
import { buildCli, type CliBuild } from './cli-build.js';

const exec = promisify(execFile);

describe('the versa bin, installed as npm installs it', () => {
  let root: string;
  let cli: CliBuild;
  let env: NodeJS.ProcessEnv;
  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'versa-install-'));
    cli = await buildCli(root);
    // A clean npm: its own empty cache, offline, no registry reachable (a download would fail, not hang).
    env = {
      PATH: process.env.PATH,
      HOME: root,
      npm_config_cache: join(root, 'npm-cache'),
      npm_config_offline: 'true',
      npm_config_registry: 'http://127.0.0.1:9/',
      npm_config_update_notifier: 'false',
      VERSA_CONFIG: join(root, 'credentials.json'),
    };
  });
  after(async () => {
    await rm(root, { recursive: true, force: true });
  });

  const run = async (file: string, args: string[], cwd = root) => {
    try {
      const { stdout, stderr } = await exec(file, args, { cwd, env, timeout: 60_000 });
      return { code: 0, stdout, stderr };
    } catch (error) {
      const e = error as { code: number; stdout: string; stderr: string };
      return { code: e.code, stdout: e.stdout, stderr: e.stderr };
    }
  };
  const isUsage = (r: { code: number; stdout: string }) => {
    assert.equal(r.code, 0);
    assert.match(r.stdout, /^versa — command-line client for a Versa server/);
    assert.match(r.stdout, /versa upload PROJECT FOLDER/);
    assert.match(r.stdout, /Exit status: 0 done/);
  };

  it('runs through the global-install symlink <prefix>/bin/versa', async () => {
    assert.equal(await readlink(cli.globalBin), '../lib/node_modules/versa/dist/cli/versa.js');
    isUsage(await run(cli.globalBin, ['help']));
  });

  it("runs through a project's node_modules/.bin/versa and through npx there, offline", async () => {
    isUsage(await run(join(cli.project, 'node_modules', '.bin', 'versa'), ['help']));
    const npx = await run('npx', ['--offline', '--no-install', 'versa', 'help'], cli.project);
    isUsage(npx);
    // In the package's own folder (a checkout after `npm run build`), npx runs its bin too.
    isUsage(await run('npx', ['--offline', '--no-install', 'versa', 'help'], cli.pkg));
  });

  it('runs with node on the file, and answers usage errors with status 2 on stderr', async () => {
    isUsage(await run(process.execPath, [cli.script, 'help']));
    const bare = await run(cli.globalBin, []);
    assert.equal(bare.code, 2);
    assert.equal(bare.stdout, '');
    assert.match(bare.stderr, /versa upload PROJECT FOLDER/);
    const unknown = await run(cli.globalBin, ['frobnicate']);
    assert.deepEqual([unknown.code, unknown.stderr], [2, 'versa: unknown command "frobnicate" (versa help lists them)\n']);
    const badOption = await run(cli.globalBin, ['projects', '--colour', 'red']);
    assert.equal(badOption.code, 2);
    assert.match(badOption.stderr, /Unknown option '--colour'/);
    const json = await run(cli.globalBin, ['upload', '--json']);
    assert.equal(json.code, 2);
    assert.deepEqual(JSON.parse(json.stderr).error, { exit_code: 2, status: null, detail: 'missing PROJECT (an id or a name)', message: 'missing PROJECT (an id or a name)' });
  });

  it('prints one command’s help and shell completion scripts that parse', async () => {
    const help = await run(cli.globalBin, ['help', 'versions', 'create']);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /^versa versions create PROJECT --name N/);
    assert.match(help.stdout, /options: --name --seed --wait --timeout/);
    const bashScript = await run(cli.globalBin, ['completion', 'bash']);
    assert.equal(bashScript.code, 0);
    assert.match(bashScript.stdout, /complete -o filenames -F _versa versa/);
    // Completing `versa ver` and `versa versions create --w` in bash itself.
    const probe = `${bashScript.stdout}
COMP_WORDS=(versa ver); COMP_CWORD=1; _versa; echo "\${COMPREPLY[*]}"
COMP_WORDS=(versa versions cr); COMP_CWORD=2; _versa; echo "\${COMPREPLY[*]}"
COMP_WORDS=(versa versions create 1 --w); COMP_CWORD=4; _versa; echo "\${COMPREPLY[*]}"`;
    const completed = await run('bash', ['-c', probe]);
    assert.deepEqual(completed.stdout.split('\n').slice(0, 3), ['versions', 'create', '--wait']);
    const zsh = await run(cli.globalBin, ['completion', 'zsh']);
    assert.match(zsh.stdout, /^#compdef versa/);
    assert.equal((await run(cli.globalBin, ['completion', 'fish'])).code, 2);
  });

  it('says so when the server cannot be reached (status 1)', async () => {
    // A port nobody listens on: one the system just handed out and took back.
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const port = (probe.address() as AddressInfo).port;
    await new Promise((resolve) => probe.close(resolve));
    const r = await run(cli.globalBin, ['projects', '--server', `http://127.0.0.1:${port}`]);
    assert.equal(r.code, 1);
    assert.equal(r.stderr, `versa: cannot reach http://127.0.0.1:${port} (ECONNREFUSED)\n`);
  });

  it('gives up a wait at its deadline with status 5 (the work goes on on the server)', async () => {
    let polls = 0;
    const error = await waitUntil(Date.now() + 300, 'version 1', async () => {
      polls++;
      return undefined;
    }).catch((e: unknown) => e);
    assert.ok(error instanceof TimeoutError);
    assert.equal(error.exitCode, 5);
    assert.equal(error.message, 'gave up waiting for version 1 (--timeout); it goes on on the server');
    assert.ok(polls >= 1);
  });
});
