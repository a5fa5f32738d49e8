/**
 * The seccomp filter every process an agent runs inside a sandbox carries (P-SBX-3): a read-only
 * bind does not stop connect(2) on a pathname socket, so without it a socket of the human's under
 * a readable root (tmux's, ssh-agent's, docker's, an editor's, a session bus) would let the agent
 * act outside its sandbox. The filter makes `socket(AF_UNIX, …)` fail with EPERM, and
 * `io_uring_setup` too (IORING_OP_SOCKET creates sockets past it), and a datagram
 * `socketpair(AF_UNIX, SOCK_DGRAM or SOCK_RAW)`: a datagram socket of a pair still sendto(2)s or
 * connect(2)s to any datagram socket's path (journald's `/dev/log`, systemd's notify socket) and
 * binds a socket file of its own. `socket(AF_VSOCK, …)` fails too: no network namespace isolates
 * vsock (a VM guest's virtio transport is global even on Linux 7.0), so it would be a route to
 * the hypervisor's services past the proxy (P-NET-1). The kernel's key store is refused too
 * (keyctl(2), add_key(2), request_key(2)): keyrings belong to a uid and a login session, not to a
 * namespace, so a run would read and plant keys in the session keyring it inherits from the
 * kernel and in its uid's user keyring (the human's, when the kernel runs as root: cached disk
 * passphrases, Kerberos tickets). A stream or seqpacket socketpair(2) stays
 * allowed (connected to its twin, it reaches nothing outside), and so do every other socket
 * family and syscall. It is a classic BPF program built here (no libseccomp), installed by a perl
 * wrapper ({@link filteredCommand}) with no_new_privs before it execs the command, which every
 * descendant inherits.
 * A syscall of another ABI than x86_64's or aarch64's (i386 through int 0x80 on x86_64, whose
 * socketcall(2) hides its family from the filter) kills the process; on x86_64 a syscall of the
 * x32 ABI fails with EPERM. bwrap's init, pid 1 inside, runs without the filter: ptrace(2),
 * process_vm_readv/writev(2) and pidfd_open(2) of pid 1 fail with EPERM too.
 */
import { PERL } from "../net/inside.ts";
import { SET_LIMIT_PERL } from "./process_limit.ts";

/** Offsets in `struct seccomp_data`: the syscall number, the ABI, the low words of args[0], [1]. */
const NR = 0, ARCH = 4, ARG0 = 16, ARG1 = 24;
/** AUDIT_ARCH_X86_64, AUDIT_ARCH_AARCH64. */
const X86_64 = 0xc000003e, AARCH64 = 0xc00000b7;
/** The x32 ABI bit of an x86_64 syscall number. */
const X32_BIT = 0x40000000;
/** AF_UNIX, as socket(2)'s and socketpair(2)'s first argument; pid 1 (bwrap's init). */
const ONE = 1;
/** AF_VSOCK. */
const AF_VSOCK = 40;
/** SOCK_DGRAM and SOCK_RAW (a datagram one for AF_UNIX); the type bits of socketpair's arg 1. */
const SOCK_DGRAM = 2, SOCK_RAW = 3, SOCK_TYPE_MASK = 0xf;
const EPERM = 1;
/** SECCOMP_RET_ALLOW, SECCOMP_RET_ERRNO (| errno), SECCOMP_RET_KILL_PROCESS. */
const ALLOW = 0x7fff0000, ERRNO = 0x00050000, KILL = 0x80000000;
/**
 * The syscalls it looks at, per ABI: socket(2), socketpair(2), io_uring_setup(2), those that
 * reach into another process, whose target pid 1 is refused (ptrace(2) names it second), and the
 * key store's, refused whole.
 */
const SYSCALLS_OF = {
  x86_64: {
    socket: 41,
    socketpair: 53,
    ptrace: 101,
    process_vm_readv: 310,
    process_vm_writev: 311,
    pidfd_open: 434,
    add_key: 248,
    request_key: 249,
    keyctl: 250,
  },
  aarch64: {
    socket: 198,
    socketpair: 199,
    ptrace: 117,
    process_vm_readv: 270,
    process_vm_writev: 271,
    pidfd_open: 434,
    add_key: 217,
    request_key: 218,
    keyctl: 219,
  },
};
const IO_URING_SETUP = 425;

/**
 * BPF_LD|BPF_W|BPF_ABS, BPF_ALU|BPF_AND|BPF_K, BPF_JMP|BPF_JEQ|BPF_K, BPF_JMP|BPF_JGE|BPF_K,
 * BPF_RET|BPF_K.
 */
const LD = 0x20, AND = 0x54, JEQ = 0x15, JGE = 0x35, RET = 0x06;

/** One instruction: a load or return, or a jump whose targets are labels further down. */
type Step =
  | { label?: string; code: number; k: number }
  | { label?: string; code: number; k: number; yes: string; no: string };

/** The checks of one ABI's syscall numbers (loaded already), its first step labelled `label`. */
function abiSteps(abi: keyof typeof SYSCALLS_OF, label: string): Step[] {
  const nr = SYSCALLS_OF[abi];
  const checks: [number, string][] = [
    [nr.socket, "socket family"],
    [nr.socketpair, "pair arg0 is 1"],
    [IO_URING_SETUP, "deny"],
    [nr.ptrace, "arg1 is 1"],
    [nr.process_vm_readv, "arg0 is 1"],
    [nr.process_vm_writev, "arg0 is 1"],
    [nr.pidfd_open, "arg0 is 1"],
    [nr.add_key, "deny"],
    [nr.request_key, "deny"],
    [nr.keyctl, "deny"],
  ];
  return checks.map(([k, yes], i) => ({
    label: i === 0 ? label : `${abi} ${i}`,
    code: JEQ,
    k,
    yes,
    no: i === checks.length - 1 ? "allow" : `${abi} ${i + 1}`,
  }));
}

/**
 * The program, read top down; a jump goes to the step with its label. bwrap's init (pid 1 inside)
 * carries no filter: no process of the agent's may ptrace it, read or write its memory or take
 * its fds (its /proc/1/mem is masked too, `command.ts`), else code put there would open sockets.
 */
const PROGRAM: Step[] = [
  { code: LD, k: ARCH },
  { code: JEQ, k: X86_64, yes: "x86_64", no: "aarch64" },
  { label: "x86_64", code: LD, k: NR },
  { code: JGE, k: X32_BIT, yes: "deny", no: "x86_64 0" },
  ...abiSteps("x86_64", "x86_64 0"),
  { label: "aarch64", code: JEQ, k: AARCH64, yes: "aarch64 nr", no: "kill" },
  { label: "aarch64 nr", code: LD, k: NR },
  ...abiSteps("aarch64", "aarch64 0"),
  { label: "socket family", code: LD, k: ARG0 },
  { code: JEQ, k: ONE, yes: "deny", no: "vsock" },
  { label: "vsock", code: JEQ, k: AF_VSOCK, yes: "deny", no: "allow" },
  { label: "arg0 is 1", code: LD, k: ARG0 },
  { code: JEQ, k: ONE, yes: "deny", no: "allow" },
  { label: "arg1 is 1", code: LD, k: ARG1 },
  { code: JEQ, k: ONE, yes: "deny", no: "allow" },
  { label: "pair arg0 is 1", code: LD, k: ARG0 },
  { code: JEQ, k: ONE, yes: "pair type", no: "allow" },
  { label: "pair type", code: LD, k: ARG1 },
  { code: AND, k: SOCK_TYPE_MASK },
  { code: JEQ, k: SOCK_DGRAM, yes: "deny", no: "pair raw" },
  { label: "pair raw", code: JEQ, k: SOCK_RAW, yes: "deny", no: "allow" },
  { label: "allow", code: RET, k: ALLOW },
  { label: "deny", code: RET, k: ERRNO | EPERM },
  { label: "kill", code: RET, k: KILL },
];

/** The filter as `struct sock_filter` records (code u16, jt u8, jf u8, k u32; little-endian). */
export function unixSocketFilter(): Uint8Array {
  const at = new Map(PROGRAM.flatMap((s, i) => s.label === undefined ? [] : [[s.label, i]]));
  const bytes = new Uint8Array(PROGRAM.length * 8);
  const view = new DataView(bytes.buffer);
  PROGRAM.forEach((step, i) => {
    view.setUint16(i * 8, step.code, true);
    if ("yes" in step) {
      const [yes, no] = [step.yes, step.no].map((label) => at.get(label)! - i - 1);
      if (!(yes >= 0 && no >= 0 && yes < 256 && no < 256)) throw new Error(`bad jump at ${i}`);
      view.setUint8(i * 8 + 2, yes);
      view.setUint8(i * 8 + 3, no);
    }
    view.setUint32(i * 8 + 4, step.k, true);
  });
  return bytes;
}

/**
 * A perl sub of the programs that install the filter (the script of {@link filteredCommand}, and
 * the network forwarder's, `net/forwarder_script.ts`): `install_filter(PRCTL, SECCOMP, HEX)`
 * installs the filter given in hex by prctl(PR_SET_NO_NEW_PRIVS) and
 * seccomp(SECCOMP_SET_MODE_FILTER), by the syscall numbers given. A failure is a line on stderr
 * and exit 126, and nothing after it runs.
 */
export const INSTALL_FILTER_PERL = String.raw`
sub install_filter {
  my ($prctl, $seccomp, $hex) = @_;
  my $filter = pack('H*', $hex);
  my $prog = pack('S x6 P', length($filter) / 8, $filter);
  return if syscall($prctl + 0, 38, 1, 0, 0, 0) == 0 && syscall($seccomp + 0, 1, 0, $prog) == 0;
  print STDERR "shoal: cannot install the sandbox's socket filter: $!\n";
  exit 126;
}
`;

/**
 * Sets the process limit given (`process_limit.ts`; none when empty), installs the filter and
 * execs the command after `--`. No module, not even strict (1.2 ms of the ~5 ms perl takes to
 * start here).
 */
const FILTER_SCRIPT = String.raw`
${SET_LIMIT_PERL}
${INSTALL_FILTER_PERL}
my ($prctl, $seccomp, $hex, $limit) = splice @ARGV, 0, 4;
shift @ARGV;
set_limit($limit);
install_filter($prctl, $seccomp, $hex);
exec { $ARGV[0] } @ARGV;
print STDERR "shoal: cannot run $ARGV[0]: $!\n";
exit 127;
`;

/** prctl(2)'s and seccomp(2)'s numbers on the architectures Deno runs on under Linux. */
const SYSCALLS: Partial<Record<typeof Deno.build.arch, { prctl: number; seccomp: number }>> = {
  x86_64: { prctl: 157, seccomp: 317 },
  aarch64: { prctl: 167, seccomp: 277 },
};

/**
 * prctl(2)'s and seccomp(2)'s syscall numbers on this host. Throws on an architecture not known
 * here: a sandbox there cannot be filtered.
 */
export function filterSyscalls(): { prctl: number; seccomp: number } {
  const numbers = SYSCALLS[Deno.build.arch];
  if (numbers === undefined) throw new Error(`no socket filter for ${Deno.build.arch}`);
  return numbers;
}

/** The filter's bytes in hex, as `install_filter` of {@link INSTALL_FILTER_PERL} takes them. */
const FILTER_HEX = [...unixSocketFilter()].map((b) => b.toString(16).padStart(2, "0")).join("");

/** The arguments of `install_filter` ({@link INSTALL_FILTER_PERL}) on this host. */
export function filterArgs(): [number, number, string] {
  const { prctl, seccomp } = filterSyscalls();
  return [prctl, seccomp, FILTER_HEX];
}

/**
 * The argv that runs `argv` under the filter (perl first, then `argv` in its pid), and under the
 * process limit `limit` when one is given (`limitSpec` of `process_limit.ts`): a sandbox's first
 * program sets it, a run entering from the host does not.
 */
export function filteredCommand(argv: readonly string[], limit = ""): string[] {
  return [PERL, "-e", FILTER_SCRIPT, ...filterArgs().map(String), limit, "--", ...argv];
}
