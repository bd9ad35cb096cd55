#!/usr/bin/env bash
# Runs a command on Node 22 LTS, the documented runtime, on a machine whose default `node` is older (issue 32):
#
#   scripts/node22.sh run CMD …    e.g. scripts/node22.sh run npm run test:databases
#
# Node 22 comes from the npm registry's `node@22` package (a real binary, with its headers), installed once into
# .cache/node22. better-sqlite3 is the one native module built for a single Node ABI (sharp and onnxruntime use the
# stable Node-API), so its binding is compiled once for Node 22 from the installed package's own sources and swapped in
# for the command, then the default Node's binding is put back, whatever the command's outcome.
set -euo pipefail
cd "$(dirname "$0")/.."

[ "${1:-}" = run ] && [ $# -ge 2 ] || { echo "usage: scripts/node22.sh run CMD …" >&2; exit 2; }
shift

cache=.cache/node22
if [ ! -x "$cache/node_modules/node/bin/node" ]; then
  npm install --no-audit --no-fund --no-save --prefix "$cache" node@22 >/dev/null
fi
bin=$(cd "$cache/node_modules/node/bin" && pwd)
headers=$(cd "$cache/node_modules/node/node_modules/node-linux-"* && pwd)
version=$("$bin/node" --version)

binding=node_modules/better-sqlite3/build/Release/better_sqlite3.node
built="$cache/better-sqlite3-$version-$(node -p 'require("better-sqlite3/package.json").version').node"
if [ ! -f "$built" ]; then
  echo "node22: compiling better-sqlite3 for Node $version (once)" >&2
  scratch=$(mktemp -d)
  cp -r node_modules/better-sqlite3/. "$scratch"
  rm -rf "$scratch/build"
  gyp=$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")/node_modules/node-gyp/bin/node-gyp.js
  (cd "$scratch" && PATH="$bin:$PATH" node "$gyp" rebuild --release --nodedir="$headers" >/dev/null)
  cp "$scratch/build/Release/better_sqlite3.node" "$built"
  rm -rf "$scratch"
fi

saved=$(mktemp)
cp "$binding" "$saved"
trap 'cp "$saved" "$binding"; rm -f "$saved"' EXIT
cp "$built" "$binding"
PATH="$bin:$PATH" "$@"
