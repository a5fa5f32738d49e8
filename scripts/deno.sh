#!/bin/sh
# Runs the pinned Deno, installing it from the npm registry into .tools/ when the machine has
# no deno of that version. Every set-up command and bin/shoal-kernel goes through here.
set -eu
version=2.9.6
# Shell builtins only on the way to the pinned copy (no dirname, no grep): each program this
# script runs costs every facade and kernel start a fork and an exec, ~5 ms here (issue 33).
case $0 in */*) here=${0%/*} ;; *) here=. ;; esac
root=$(cd "$here/.." && pwd)
local_deno="$root/.tools/node_modules/.bin/deno"
# Deno's own check for a newer Deno is off unless asked for: it sent a DNS query and a request
# for dl.deno.land/release-latest.txt from every facade and kernel start (seen with strace), a
# network call the user never asked shoal to make. Exported, so the kernel's sessions see it.
DENO_NO_UPDATE_CHECK=${DENO_NO_UPDATE_CHECK-1}
export DENO_NO_UPDATE_CHECK
# The pinned copy in .tools/ first: its package.json names its version, so no Deno process has to
# start just to say which version it is (that would cost every facade or kernel start ~40 ms).
manifest="$root/.tools/node_modules/deno/package.json"
pinned=false
if [ -x "$local_deno" ] && [ -r "$manifest" ]; then
  # Not exec inside the loop: its stdin is the manifest there, and the facade's is its MCP client.
  while IFS= read -r line || [ -n "$line" ]; do
    case $line in *"\"version\": \"$version\""*) pinned=true && break ;; esac
  done <"$manifest"
fi
if $pinned; then
  exec "$local_deno" "$@"
fi
if command -v deno >/dev/null 2>&1 && deno --version 2>/dev/null | head -n 1 | grep -q "^deno $version "; then
  exec deno "$@"
fi
echo "shoal: installing deno $version from npm into $root/.tools" >&2
# npm's errors shown (--silent hid them: a failed install said nothing but the line above).
if ! npm install --loglevel=error --no-update-notifier --no-audit --no-fund --prefix "$root/.tools" "deno@$version" >&2; then
  echo "shoal: npm could not install deno $version (its error is above): let npm reach its registry, or put Deno $version on PATH" >&2
  exit 1
fi
exec "$local_deno" "$@"
