/**
 * The bash driver of every run (K-BASH-1/4/7): the `bash -c` text that restores the session's
 * state, runs the user's source and dumps the state it ends with for `parseDump` (shell_state.ts) to read.
 */
import { quoted } from "./quote.ts";

/**
 * Where a driver's text names its state file, which {@link driverFor} fills in: the dump wrote to
 * `"$__shoal_dir/state"`, a variable of the run's, so a run that unset every variable it listed
 * (`for v in $(compgen -v); do unset $v; done`) lost its state and had the dump written to
 * `/state`, at the root of the file system when run as root; one that set the variable had it
 * written there.
 */
const STATE_FILE = "@SHOAL_STATE_FILE@";

/** `driver` (one of this module's, or a bench's variant) for a bash whose scratch directory is `dir`. */
export function driverFor(driver: string, dir: string): string {
  return driver.replace(STATE_FILE, quoted(`${dir}/state`));
}

/** The builtins the driver's end and its dump call. */
const DUMP_BUILTINS = "set trap unset local cd printf declare alias exit [ : ulimit";

/**
 * Makes the builtins the dump calls reachable again, whatever the run did to them (K-BASH-4): a
 * function named `builtin` (a logging wrapper, say) took every `builtin …` of the driver's, so its
 * output went to the run's stderr, `builtin set -- "$st"` set the wrapper's own parameters and
 * the run ended with status 2 (`exit: : numeric argument required`); one that only returned
 * skipped the dump, and the run's state was lost. `enable -n printf` (or `declare`, `[`, `exit`,
 * `builtin`…) lost the state as well, with the driver's errors in stderr. Only keywords and
 * assignments reach past functions: setting `POSIXLY_CORRECT` turns posix mode on, where `unset`,
 * a special builtin, is found before a function of that name; so a function named `builtin` lives
 * for its run only (none can be read without calling `builtin` or `command`, either maybe the
 * user's). The run's own `POSIXLY_CORRECT` and posix mode are left as they were; a builtin
 * disabled is enabled again (`enable` itself when `builtin` is disabled). What stays out of reach
 * (`enable -n enable builtin`, a read-only function) loses the state as an `exec` of another
 * program does.
 */
const REACH_BUILTINS = "if [[ -o posix ]]; then unset -f builtin; " +
  "elif [[ ! -v POSIXLY_CORRECT ]]; then POSIXLY_CORRECT=y; unset -f builtin; unset POSIXLY_CORRECT; fi; " +
  `builtin enable ${DUMP_BUILTINS} || enable builtin ${DUMP_BUILTINS} || [[ -n 1 ]]`;

/**
 * The driver's start: sets up the EXIT trap that dumps cwd, variables (one `declare -p` listing),
 * functions and aliases as NUL-separated records (K-BASH-7). The dump uses builtins writing
 * straight to the file: no command substitution, no fork. Bash writes each line of a listing
 * with a write of its own (stdout is line-buffered), so the driver's own functions and variables
 * are removed first (the status waits in the trap's positional parameters) and the record markers
 * share writes. The file is opened without truncation (`1<>`; the scratch pool hands it over
 * empty), so ext4 neither creates an inode per run nor allocates blocks at close, and `set -C`
 * cannot refuse it. Its local `IFS` (bash's default, with the export attribute of the user's
 * `IFS`) stands in for the user's, which bash resets at start. The trap only calls a function defined here, and every command in it is a `builtin`: aliases
 * and functions of the user's (`exit`, `[`, `set`…) never run in their place. The dump is that
 * function's own body, one call deep: a `FUNCNEST` of 1 (shared by another principal) cannot stop it.
 * The cwd recorded is `PWD` while it names the directory bash is in; one renamed (or replaced)
 * under bash leaves `PWD` naming another or none, and the directory's own path is taken
 * (`cd -P .`): the session went back to its previous cwd instead, and the next `touch` landed
 * there.
 * A run that ends by itself calls that function too ({@link DRIVER_RUN}): the source may have
 * set an EXIT trap of its own in place of the driver's, or one that adds to the text `trap -p`
 * shows it (`trap "$old; cleanup" EXIT`): called from a trap, the function returns rather than
 * exits (bash keeps the status the shell exits with), so the rest of that text runs; it exited,
 * and a run ending by `exit` never ran its cleanup. Once dumped, the function does nothing:
 * the trap that calls it then, the driver's, no longer dumps, and a trap of the run's own runs
 * after the dump (its `cd` or `export` never reaches the session, as traps never persist).
 * The function first keeps the status, turns `xtrace`, `verbose` and `functrace` off, removes
 * a DEBUG trap and undoes a file size limit the run lowered (`ulimit -f`) as far as it can (the
 * soft limit up to the hard one, and SIGXFSZ ignored: a dump past the hard limit fails to be
 * written, its error silenced, and the state is lost; SIGXFSZ killed bash as it dumped, a run
 * that ended by itself with 0 had status null, signal SIGXFSZ and 'environment: line 1:
 * __shoal_exit: command not found' in its stderr), its own trace and trap output going to
 * /dev/null (the driver's line does so before it calls the function, which then shows in no
 * trace): a run that left `set -x` on had the whole dump traced into its stderr, and a DEBUG trap
 * fired for the driver's commands. The trap's call itself is traced (`+ FUNCNEST=` and `+ __shoal_exit`, when such a run ends by `exit` or
 * `set -e`): a trap text doing more would be parsed with the user's aliases (`{` too) in force.
 * Before anything else, both reach the builtins again ({@link REACH_BUILTINS}).
 * The trap calls the function with `FUNCNEST` empty for that call (an assignment and a quoted
 * word, which no alias changes), and the function then unsets that temporary value, so the dump
 * lists the run's own: a run's `FUNCNEST=1` made the trap's call, one deeper than the driver's,
 * fail with 'maximum function nesting level exceeded' in the stderr of every exec of the session,
 * and a run ending by `exit` (or errexit) in a function as deep as its FUNCNEST allows lost its
 * state. The driver's line passes the run's status as the function's argument, the trap none
 * (the status is then `$?`), and the main shell is told from a subshell by `$$`: a run that set
 * `__shoal_st` (or `__shoal_pid`, as the driver named them) ended with that status (or dumped
 * nothing). A run that unset `BASHPID` (with every other variable) is taken to end in the main
 * shell: it dumped nothing. The state file is named in the text itself ({@link STATE_FILE}).
 */
const DRIVER_SETUP = String.raw`__shoal_dir=$1
set --
__shoal_exit() {
  { __shoal_st=$?; ${REACH_BUILTINS}
    if [[ $# -gt 0 ]]; then __shoal_st=$1; else builtin unset -v FUNCNEST; fi
    builtin set +xvT; builtin trap - DEBUG; builtin ulimit -S -f hard; builtin trap '' XFSZ
  } >/dev/null 2>&1
  builtin set -- "$__shoal_st" "$#"
  if [[ ${"$"}{BASHPID-$$} == "$$" ]]; then
    builtin unset -f __shoal_exit
    builtin set +eu
    builtin local IFS=$' \t\n'
    {
      builtin unset -v __shoal_dir __shoal_st 2>/dev/null
      builtin [ . -ef "$PWD" ] || builtin cd -P . 2>/dev/null
      builtin printf 'C\0%s\0D\0' "$PWD"
      builtin declare -p
      builtin printf '\0F\0'
      builtin declare -f
      builtin printf '\0A\0'
      builtin alias -p
      builtin printf '\0Z\0'
    } 1<>${STATE_FILE} 2>/dev/null
    __shoal_exit() { builtin :; }
  fi
  [[ $2 == 0 ]] || builtin exit "$1"
}
trap 'FUNCNEST= \__shoal_exit' EXIT
`;

/**
 * The driver's end: restores the state (an empty restore script, a session with nothing to
 * restore, is not sourced: sourcing a file costs bash about as much as ten builtins), turns alias
 * expansion on, then evaluates the user's source and dumps the state, in one line, which bash
 * parses before running it: the restored aliases cannot change it. The source is read into a
 * variable (`mapfile`, buffered, split at NUL bytes, then joined: bash drops them, as its `source`
 * does) and `eval`ed; that variable is `BASH_EXECUTION_STRING`, which holds the text of `bash -c`
 * (the driver's until then), so nothing of the driver's shows in an error bash finds in it and
 * the run sees its own text there, as in `bash -c`. Sourced from its scratch file, the source had
 * `BASH_SOURCE` name that file, so the usual
 * `cd "$(dirname "${BASH_SOURCE[0]}")"` moved the session into the kernel's scratch directory
 * (later execs wrote there), its errors began with the file's path, and a RETURN trap the run set
 * fired as the file ended. As in `bash -c`, a `return` outside a function is now an error. The restore is read with `extglob`
 * on (then off again, as a fresh bash has it): `declare -f` writes a function defined under
 * `shopt -s extglob` with its `@(…)` patterns, a syntax error otherwise, which lost the function
 * and printed the error on every later exec's stderr. Options still never persist (K-BASH-5).
 */
const DRIVER_RUN = String.raw`builtin [ -s "$__shoal_dir/restore" ] && \
if builtin shopt -q extglob; then builtin source "$__shoal_dir/restore"; \
else builtin shopt -s extglob; builtin source "$__shoal_dir/restore"; builtin shopt -u extglob; fi; \
builtin shopt -s expand_aliases; builtin mapfile -d '' __shoal_lines <"$__shoal_dir/src"; \
builtin printf -v BASH_EXECUTION_STRING %s "${"$"}{__shoal_lines[@]}"; builtin unset -v __shoal_lines; \
builtin eval "$BASH_EXECUTION_STRING"; \
{ __shoal_st=$?; ${REACH_BUILTINS}; builtin set +xvT; builtin trap - DEBUG; } >/dev/null 2>&1; __shoal_exit "$__shoal_st"
`;

/**
 * A driver's text as one line: each line ends its command (`; `), but for one ending in `\`, a
 * keyword or an operator that wants more (`{`, `then`, `else`, `do`, `&&`, `||`, `|`). The user's
 * source is evaluated from that line, the first of bash's `-c` text, so its `LINENO` and the
 * line numbers of its errors count from 1, as in `bash -c`.
 */
function oneLine(text: string): string {
  return text.trimEnd().split("\n").map((line) => line.trim()).reduce((out, line) => {
    if (out === "") return line;
    if (out.endsWith("\\")) return out.slice(0, -1) + line;
    return /(^|[\s;])(\{|then|else|do|&&|\|\||\|)$/.test(out)
      ? `${out} ${line}`
      : `${out}; ${line}`;
  }, "");
}

/** The `bash -c` driver of a cold run: restores state, then evaluates the user's source. */
export const DRIVER = oneLine(DRIVER_SETUP + DRIVER_RUN);

/**
 * The driver of a warm shell: it waits, before any restore, until the kernel writes `run` into the
 * `go` FIFO; then `SECONDS` restarts (the wait does not show) and it goes on as a cold run. The
 * restore script it then sources starts with the environment changes since its spawn
 * (`envDelta`, shell_state.ts). Anything else read (EOF: the kernel is gone) exits at once, running nothing
 * and dumping nothing.
 */
export const WARM_DRIVER = oneLine(
  DRIVER_SETUP + String.raw`builtin read -r __shoal_go <"$__shoal_dir/go"
[ "$__shoal_go" = run ] || { trap - EXIT; builtin exit 0; }
builtin unset __shoal_go
SECONDS=0
` + DRIVER_RUN,
);
