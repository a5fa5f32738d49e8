#!/bin/sh
# The whole test suite as two `deno test` processes side by side, each about half the suite:
# one after the other they took 10-11 minutes on a 2-core machine, mostly waiting on bash, bwrap,
# PTYs and kernels. Two processes, not `deno test --parallel`, which runs files in one process:
# there the tests that read their own process's descriptors (/proc/self/fd) see each other's.
# The first part's output follows the second's; the last line sums both in Deno's own form
# (`ok | N passed | M failed | K ignored`), and the status fails when either part failed.
# Flags given (such as --fail-fast) go to both parts; run one file with `scripts/deno.sh test -A FILE`.
set -u
case $0 in */*) here=${0%/*} ;; *) here=. ;; esac
root=$(cd "$here/.." && pwd)
cd "$root"
deno="$root/scripts/deno.sh"
# Deno colours its summary lines unless told not to, and they are read below.
NO_COLOR=1
export NO_COLOR
# Two halves of about equal time, by directory so that a new test lands in one by where it lives:
# the facade's side (end to end through it, its own tests, the CLI), the PTYs, the sandbox and the
# store against the rest of the kernel. Measured side by side on 2 cores (each directory's tests
# plus ~1 s a file to load it), in shares of the suite: sandbox 22 %, e2e 14 %, net 8 %, policy 7 %,
# pty and session 6 % each, mcp 5 %, each other directory 4 % or less. The former split (e2e, pty,
# mcp, daemon, cli against the rest) took 6 and 12.5 minutes, the second part alone for the last 6.
first="tests/e2e tests/mcp tests/kernel/cli tests/kernel/pty tests/kernel/sandbox tests/kernel/store"
first_log=$(mktemp)
rest_log=$(mktemp)
trap 'rm -f "$first_log" "$rest_log"' EXIT
# shellcheck disable=SC2086 # the list splits into paths
"$deno" test --allow-all "$@" $first >"$first_log" 2>&1 &
first_pid=$!
# Interrupted, the first part stops too.
trap 'kill "$first_pid" 2>/dev/null; exit 130' INT TERM
# The second part shows as it goes (its status is read from its summary: a pipe keeps tee's), the
# first once both are done.
# shellcheck disable=SC2086
"$deno" test --allow-all "$@" --ignore="$(echo $first | tr ' ' ',')" tests/ 2>&1 | tee "$rest_log"
wait "$first_pid"
first_status=$?
cat "$first_log"
# The last summary line of a part's log: `ok | N passed | M failed …`, or nothing when it has none.
summary() { grep -E '^(ok|FAILED) \| [0-9]+ passed' "$1" | tail -n 1; }
# The count before `what` in summary line $1, 0 when absent.
count() {
  n=$(echo "$1" | sed -nE "s/.*\| ([0-9]+) $2.*/\1/p")
  echo "${n:-0}"
}
a=$(summary "$first_log")
b=$(summary "$rest_log")
passed=$(($(count "$a" passed) + $(count "$b" passed)))
failed=$(($(count "$a" failed) + $(count "$b" failed)))
ignored=$(($(count "$a" ignored) + $(count "$b" ignored)))
if [ "$first_status" -eq 0 ] && [ "${a%% *}" = ok ] && [ "${b%% *}" = ok ]; then
  echo "ok | $passed passed | $failed failed | $ignored ignored (in two parts)"
  exit 0
fi
echo "FAILED | $passed passed | $failed failed | $ignored ignored (in two parts)"
exit 1
