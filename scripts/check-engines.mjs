#!/usr/bin/env node
// The Node versions Versa supports, checked (issue 12). `engines.node` in package.json is the claim; this script
// fails when
//   1. the running Node does not satisfy it (CI runs this on the Node it tests with), or
//   2. a runtime dependency (production tree, from `npm ls --omit=dev --all --parseable`) declares an engines.node
//      that the lowest version of each of our ranges does not satisfy — unless it is listed in KNOWN below, with why.
// The floor comes from zlib.crc32 (src/formats/zip/zip-writer.ts; Node >= 20.15 / 22.2) and from the web build
// (vite 8 and rolldown declare ^20.19.0 || >=22.12.0).
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import zlib from 'node:zlib';
import semver from 'semver';

/** Dependencies whose declared engines are stricter than what they need; each is exercised by the test suite on Node 20. */
const KNOWN = {
  // cookie 2 (through @fastify/cookie and fastify's light-my-request) declares >=22 but is plain ES2020 JavaScript.
  cookie: '>=22',
  // content-disposition 3 (through @fastify/swagger-ui → @fastify/static, serving /docs assets) declares >=22; the
  // platform test serves those assets on Node 20.
  'content-disposition': '>=22',
};

const pkg = JSON.parse(readFileSync('package.json', 'utf8'));
const ours = pkg.engines.node;
const problems = [];

if (!semver.satisfies(process.version, ours)) problems.push(`running Node ${process.version} does not satisfy engines.node "${ours}"`);
if (typeof zlib.crc32 !== 'function') problems.push(`Node ${process.version} lacks zlib.crc32 (needs >= 20.15)`);

const floors = new semver.Range(ours).set.map((comparators) => semver.minVersion(comparators.map((c) => c.value).join(' ')).version);
const paths = execFileSync('npm', ['ls', '--omit=dev', '--all', '--parseable'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] })
  .split('\n')
  .filter(Boolean)
  .slice(1);
let checked = 0;
for (const dir of new Set(paths)) {
  let dep;
  try {
    dep = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
  } catch {
    continue;
  }
  checked++;
  const theirs = dep.engines?.node;
  if (!theirs || !semver.validRange(theirs)) continue;
  const failing = floors.filter((v) => !semver.satisfies(v, theirs));
  if (failing.length === 0) continue;
  if (KNOWN[dep.name] === theirs) continue;
  problems.push(`${dep.name}@${dep.version} declares node "${theirs}", which Node ${failing.join(', ')} (allowed by engines "${ours}") does not satisfy`);
}

if (problems.length > 0) {
  console.error(`engines check failed:\n  ${problems.join('\n  ')}`);
  process.exit(1);
}
console.log(`engines ok: Node ${process.version} satisfies "${ours}"; ${checked} runtime packages declare nothing stricter (known: ${Object.keys(KNOWN).join(', ')})`);
