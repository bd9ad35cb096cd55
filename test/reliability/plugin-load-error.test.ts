/**
 * Issue 24, item 10: a plugin's load error was listed verbatim to every account, with the absolute paths of the
 * server ("Cannot find module '/srv/versa/plugins/…' imported from /srv/versa/plugins/…"). Now only admins get the
 * error, with paths inside the plugin folder relative to it and any other path cut to its last part; other accounts
 * see that the plugin failed to load, and nothing of why.
 */
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { loadPluginDirectory, relativeToPluginFolder } from '../../src/plugins/plugin-loader.js';
import { PluginRegistry } from '../../src/plugins/plugin-registry.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

type User = Awaited<ReturnType<TestApp['user']>>;
type Listed = { status: string; source: string | null; error: string | null };

const silent = { info: () => undefined, warn: () => undefined };

describe('plugin load errors', () => {
  let t: TestApp;
  let admin: User;
  let member: User;
  let pluginsDir: string;

  before(async () => {
    pluginsDir = await mkdtemp(join(tmpdir(), 'versa-plugins-'));
    await writeFile(join(pluginsDir, 'needs-dep.mjs'), 'import "./missing-dep.mjs";\nexport default { type: "exporter", name: "x", version: "1.0.0", schema: {} };');
    await mkdir(join(pluginsDir, 'thrower'));
    await writeFile(join(pluginsDir, 'thrower', 'index.mjs'), 'throw new Error("cannot open /etc/versa/secret.key");');
    await writeFile(join(pluginsDir, 'no-version.mjs'), 'export default { type: "exporter", name: "parquet", schema: { type: "object" } };');
    t = await startTestApp({ PLUGINS_DIR: pluginsDir });
    admin = await t.user(); // the first account of an instance is its admin
    member = await t.user();
  });
  after(async () => {
    await t.close();
    await rm(pluginsDir, { recursive: true, force: true });
  });

  const failed = async (user: User) => {
    const res = await user.get('/api/plugins');
    assert.equal(res.status, 200);
    return new Map((res.body as Listed[]).filter((p) => p.status === 'failed').map((p) => [p.source, p.error]));
  };

  it('admins see the error with paths relative to the plugin folder, and no other server path', async () => {
    const errors = await failed(admin);
    assert.deepEqual([...errors.keys()].sort(), ['needs-dep.mjs', 'no-version.mjs', 'thrower']);
    assert.match(errors.get('needs-dep.mjs')!, /import failed: .*'missing-dep\.mjs' imported from needs-dep\.mjs/);
    assert.match(errors.get('thrower')!, /import failed: cannot open …\/secret\.key/);
    assert.match(errors.get('no-version.mjs')!, /"version" must be a semantic version/);
    for (const error of errors.values()) {
      assert.ok(!error!.includes(pluginsDir) && !error!.includes(tmpdir()) && !error!.includes('/etc/'), error!);
    }
  });

  it('other accounts see that a plugin failed to load, without its error', async () => {
    const errors = await failed(member);
    assert.deepEqual([...errors.keys()].sort(), ['needs-dep.mjs', 'no-version.mjs', 'thrower']);
    assert.deepEqual([...errors.values()], [null, null, null]);
    assert.ok(!JSON.stringify((await member.get('/api/plugins?plugin_type=exporter')).body).includes('semantic version'));
  });

  it('a PLUGINS_DIR that cannot be read is reported without its path', async () => {
    const registry = new PluginRegistry();
    const missing = join(pluginsDir, 'nowhere');
    await loadPluginDirectory(registry, missing, silent);
    const [failure] = registry.failures();
    assert.equal(failure.source, 'PLUGINS_DIR');
    assert.match(failure.error, /^PLUGINS_DIR cannot be read: ENOENT/);
    assert.ok(!failure.error.includes(pluginsDir), failure.error);
  });

  it('cuts file URLs and paths under either spelling of the folder, and leaves relative paths and web addresses', () => {
    const roots = ['/srv/plugins', '/data/real/plugins'];
    assert.equal(relativeToPluginFolder('at file:///data/real/plugins/a/b%20c.mjs:3:7', roots), 'at a/b c.mjs:3:7');
    assert.equal(relativeToPluginFolder("scandir '/srv/plugins'", roots), "scandir '.'");
    assert.equal(relativeToPluginFolder('see ./x/y.mjs, 1/2 and https://example.com/docs', roots), 'see ./x/y.mjs, 1/2 and https://example.com/docs');
    assert.equal(relativeToPluginFolder('(/usr/lib/node_modules/sharp/lib/index.js)', roots), '(…/index.js)');
  });
});
