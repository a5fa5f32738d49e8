/**
 * The bound on how many processes one sandbox holds at once: RLIMIT_NPROC, set by the first
 * program inside (bwrap's command, {@link SET_LIMIT_PERL}) and by util-linux's `prlimit` on every
 * run that enters through nsenter, so that a fork loop of an agent's run fails with EAGAIN
 * instead of taking the host down. Since Linux 5.14 the limit counts the tasks (threads too) of
 * one uid in one user namespace, and an unprivileged bwrap gives each sandbox its own: the count
 * is of that sandbox alone, not of the user's other processes. It is set inside, after bwrap made
 * that namespace: a namespace records its creator's limit as the bound on the creator's processes
 * in the parent namespace, so a limit set on bwrap itself would cap the user's whole session.
 * Linux exempts real root and holders of CAP_SYS_ADMIN or CAP_SYS_RESOURCE in the first namespace:
 * a kernel run as root (whose bwrap makes no user namespace) sets the limit but it bounds nothing.
 */

/**
 * The most tasks one sandbox holds at once: the default pids limit of an OpenShift pod (the
 * kubelet's `podPidsLimit`), under which container builds (`make -j`, cargo, npm, JVM builds)
 * run. Threads count: a `cargo build` on 64 cores, or a test run of 8 browser workers, holds well
 * under 2,000. 4,096 sleeping shells held ~1 GiB here (~240 KiB each, measured), an eighth of
 * this host's default pid_max.
 */
export const SANDBOX_PROCESSES = 4096;

let limit: number | undefined;

/**
 * RLIMIT_NPROC of every sandboxed process (soft and hard): {@link SANDBOX_PROCESSES}, or the
 * kernel's own soft limit when that is lower (prlimit could not raise the hard limit past it).
 */
export function processLimit(): number {
  if (limit !== undefined) return limit;
  limit = SANDBOX_PROCESSES;
  try {
    const line = Deno.readTextFileSync("/proc/self/limits").split("\n")
      .find((l) => l.startsWith("Max processes"));
    const soft = Number(line?.slice("Max processes".length).trim().split(/\s+/)[0]);
    if (soft >= 1 && soft < limit) limit = soft;
  } catch {
    // no /proc: the default
  }
  return limit;
}

/** prlimit64(2)'s number on the architectures Deno runs on under Linux. */
const PRLIMIT64: Partial<Record<typeof Deno.build.arch, number>> = { x86_64: 302, aarch64: 261 };

/**
 * A perl sub of the first program inside a sandbox (the socket filter's script, or the network
 * forwarder's): `set_limit(SPEC)` sets RLIMIT_NPROC as {@link limitSpec} gives it (soft and hard,
 * by prlimit64's number), or nothing for an empty SPEC; a failure is a line on stderr and exit
 * 126. It costs that program nothing it loads: util-linux's `prlimit` there was one more exec
 * before the launcher of every resident sandbox (issue 33).
 */
export const SET_LIMIT_PERL = String.raw`
sub set_limit {
  my ($nr, $n) = split /:/, shift;
  return unless defined $n;
  my $limit = pack('QQ', $n, $n);
  return if syscall($nr + 0, 0, 6, $limit, 0) == 0; # RLIMIT_NPROC (6) of this process
  print STDERR "shoal: cannot set the sandbox's process limit: $!\n";
  exit 126;
}
`;

/**
 * The {@link processLimit} as `set_limit` of {@link SET_LIMIT_PERL} takes it: prlimit64's number
 * and the limit. Throws on an architecture not known here.
 */
export function limitSpec(): string {
  const nr = PRLIMIT64[Deno.build.arch];
  if (nr === undefined) throw new Error(`no prlimit64 number for ${Deno.build.arch}`);
  return `${nr}:${processLimit()}`;
}

/** The `prlimit` command that runs what follows its `--` under the {@link processLimit}. */
export function limitCommand(prlimit: string): string[] {
  return [prlimit, `--nproc=${processLimit()}`];
}
