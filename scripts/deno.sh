#!/bin/sh
# Runs the pinned Deno, installing it from the npm registry into .tools/ when the machine has
# no deno of that version. Every set-up command and bin/shoal-kernel goes through here.
set -eu
version=2.9.6
root=$(cd "$(dirname "$0")/.." && pwd)
local_deno="$root/.tools/node_modules/.bin/deno"
# The pinned copy in .tools/ first: its package.json names its version, so no Deno process has to
# start just to say which version it is (that would cost every facade or kernel start ~40 ms).
if [ -x "$local_deno" ] &&
  grep -q "\"version\": \"$version\"" "$root/.tools/node_modules/deno/package.json" 2>/dev/null; then
  exec "$local_deno" "$@"
fi
if command -v deno >/dev/null 2>&1 && deno --version 2>/dev/null | head -n 1 | grep -q "^deno $version "; then
  exec deno "$@"
fi
echo "shoal: installing deno $version from npm into $root/.tools" >&2
npm install --silent --no-audit --no-fund --prefix "$root/.tools" "deno@$version" >&2
exec "$local_deno" "$@"
