/**
 * A sandboxed run's environment as the host programs that start it see it (P-SBX-3): `sh`, bwrap,
 * nsenter, setpriv and setsid run on the host, unconfined, before the run is inside, so a name
 * that makes a program load or run code of the caller's choosing (`LD_PRELOAD=./evil.so`) would
 * run the agent's code there, as the human. Such names are handed in past them instead.
 */

/**
 * Names a host program must not get from an agent: the dynamic loader's `LD_*`, the rest of
 * glibc's list of variables unsafe for secure-execution programs (modules, locale and resolver
 * files, trace output), and what a POSIX shell or bash as `sh` runs at start (`ENV`, `BASH_ENV`,
 * `SHELLOPTS` with `PS4`, exported functions), and what makes perl load code: the perl that
 * installs the sandbox's socket filter runs before it is in place (`unix_socket_filter.ts`).
 */
const HOST_UNSAFE =
  /^(LD_.*|GCONV_PATH|GETCONF_DIR|GLIBC_TUNABLES|HOSTALIASES|LOCALDOMAIN|LOCPATH|MALLOC_.*|NIS_PATH|NLSPATH|RESOLV_HOST_CONF|RES_OPTIONS|TMPDIR|TZDIR|ENV|BASH_ENV|SHELLOPTS|BASHOPTS|PS4|BASH_FUNC_.*|PERL5OPT|PERL5LIB|PERLLIB|PERL5DB)$/;

/** `env` inside every sandbox (/usr is always bound), which sets the held-back names. */
const ENV_PROGRAM = "/usr/bin/env";

/** A run's environment split into what the host programs may see and what is set only inside. */
export interface HostEnv {
  /** The environment the host programs start with. */
  host: Map<string, string>;
  /** `NAME=VALUE` of each held-back name, for {@link insideArgv}. */
  inside: string[];
}

/** Splits `env` into the part host programs may see and the names only the run gets. */
export function hostEnv(env: Iterable<readonly [string, string]>): HostEnv {
  const host = new Map<string, string>();
  const inside: string[] = [];
  for (const [name, value] of env) {
    if (HOST_UNSAFE.test(name)) inside.push(`${name}=${value}`);
    else host.set(name, value);
  }
  return { host, inside };
}

/** `argv` to run inside the sandbox with the held-back names of {@link hostEnv} set again. */
export function insideArgv(inside: readonly string[], argv: readonly string[]): string[] {
  return inside.length === 0 ? [...argv] : [ENV_PROGRAM, ...inside, ...argv];
}
