#!/usr/bin/env node
// The Node versions Versa supports, checked (issues 12 and 32). `engines.node` in package.json is the claim: Node 22
// LTS from 22.12 (the Vite 8 build's floor in the 22 line). This script fails when
//   1. the running Node satisfies neither it nor STILL_RUNS below (CI runs this on the Node it tests with), or
//   2. a runtime dependency (production tree, from `npm ls --omit=dev --all --parseable`) declares an engines.node
//      that the lowest version of each of our ranges does not satisfy — unless it is listed in KNOWN below, with why.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import zlib from 'node:zlib';
import semver from 'semver';

/** Dependencies whose declared engines are stricter than what they need, with why (none since Node 22 is the floor). */
const KNOWN = {};

/**
 * Node 20 reached end of life in April 2026 and is not supported, but this CI machine's default Node is 20.20 and the
 * whole suite still passes on it (zlib.crc32 needs >= 20.15, the Vite 8 build ^20.19; cookie 2 and
 * content-disposition 3 declare >= 22 but run on it). Delete this range when the machine's default is Node 22.
 */
const STILL_RUNS = '^20.19.0';

const pkg = JSON.parse(readFileSync('package.json', 'utf8'));
const ours = pkg.engines.node;
const problems = [];

const supported = semver.satisfies(process.version, ours);
if (!supported && !semver.satisfies(process.version, STILL_RUNS)) problems.push(`running Node ${process.version} does not satisfy engines.node "${ours}"`);
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
const running = supported ? `Node ${process.version} satisfies "${ours}"` : `Node ${process.version} is past end of life, tolerated as "${STILL_RUNS}" (engines.node is "${ours}")`;
console.log(`engines ok: ${running}; ${checked} runtime packages declare nothing stricter (known: ${Object.keys(KNOWN).join(', ') || 'none'})`);
