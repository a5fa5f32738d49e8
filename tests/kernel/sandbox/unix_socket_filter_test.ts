/**
 * The sandbox's socket filter (P-SBX-3), by its effect on real programs run under it, no sandbox
 * around them: a Unix socket cannot be created, so a socket the host listens on hears nothing;
 * socketpair(2), pipes and other socket families work; io_uring cannot be set up; on x86_64 the
 * x32 ABI's socket(2) fails too; pid 1 (bwrap's init inside a sandbox) cannot be reached into.
 * Installing it needs no privilege.
 */
import assert from "node:assert/strict";
import { filteredCommand } from "../../../src/kernel/sandbox/unix_socket_filter.ts";
import { AS_OTHER_USER, otherUserMissing } from "../../_support/other_user.ts";
import { hostTest, needsLinux } from "../../_support/host.ts";
import { withTempDir } from "../../_support/temp_dir.ts";
import { unixListener } from "../../_support/unix_listener.ts";

const LINUX = needsLinux("seccomp");

/** Runs `argv` under the filter (after `prefix`, e.g. a change of user): exit code and output. */
async function filtered(argv: string[], prefix: string[] = []) {
  const [cmd, ...args] = [...prefix, ...filteredCommand(argv)];
  const out = await new Deno.Command(cmd, { args, stdin: "null" }).output();
  const text = new TextDecoder();
  return { code: out.code, out: text.decode(out.stdout), err: text.decode(out.stderr) };
}

/** Python that tries each socket family, a socketpair and a pipe, then connects to `path`. */
function probe(path: string): string[] {
  return [
    "python3",
    "-c",
    `import socket, os, errno
for fam, name in [(socket.AF_INET, "inet"), (socket.AF_INET6, "inet6"), (socket.AF_UNIX, "unix")]:
    for kind in (socket.SOCK_STREAM, socket.SOCK_DGRAM):
        try:
            socket.socket(fam, kind).close(); print(name, "ok")
        except OSError as e:
            print(name, errno.errorcode[e.errno])
a, b = socket.socketpair(); a.send(b"x"); print("pair", b.recv(1).decode())
r, w = os.pipe(); os.write(w, b"y"); print("pipe", os.read(r, 1).decode())
s = socket.socket(socket.AF_UNIX)
s.connect(${JSON.stringify(path)})
print("connected")`,
  ];
}

const EXPECTED = "inet ok\ninet ok\ninet6 ok\ninet6 ok\nunix EPERM\nunix EPERM\npair x\npipe y\n";

hostTest(
  "P-SBX-3 under the socket filter a Unix socket cannot be created (EPERM) and the host's listening socket hears nothing; other families, socketpair and pipes work",
  LINUX,
  async () => {
    await withTempDir(async (dir) => {
      const host = unixListener(`${dir}/agent.sock`);
      try {
        const r = await filtered(probe(`${dir}/agent.sock`));
        assert.equal(r.out, EXPECTED, r.err);
        assert.notEqual(r.code, 0);
        assert.match(r.err, /PermissionError: \[Errno 1\] Operation not permitted/);
        // perl, by socket(2) itself
        const perl = await filtered([
          "perl",
          "-MSocket",
          "-e",
          `socket(my $s, PF_UNIX, SOCK_STREAM, 0) or die "socket: $!\\n"; connect($s, pack_sockaddr_un("${dir}/agent.sock")) or die "connect: $!\\n"`,
        ]);
        assert.equal(perl.err, "socket: Operation not permitted\n");
        assert.equal(host.accepted(), 0, "the host side heard a connection");
        // unfiltered, the same program connects: the listener would have seen it
        const [cmd, ...args] = probe(`${dir}/agent.sock`);
        const free = await new Deno.Command(cmd, { args }).output();
        assert.match(new TextDecoder().decode(free.stdout), /unix ok\n.*connected\n$/s);
        assert.equal(host.accepted(), 1);
      } finally {
        host.close();
      }
    });
  },
);

hostTest(
  "P-SBX-3 under the socket filter io_uring_setup fails with EPERM (IORING_OP_SOCKET would create sockets past it); on x86_64 so does the x32 ABI's socket(2)",
  LINUX,
  async () => {
    // io_uring_setup(8, &params): 425 on every architecture
    const uring =
      `my $p = "\\0" x 120; my $r = syscall(425, 8, $p); print $r < 0 ? "uring $!\\n" : "uring ok\\n"`;
    const x32 = Deno.build.arch === "x86_64"
      ? `my $r = syscall(41 | 0x40000000, 1, 1, 0); print $r < 0 ? "x32 $!\\n" : "x32 ok\\n"`
      : `print "x32 Operation not permitted\\n"`;
    const r = await filtered(["perl", "-e", `${uring}; ${x32}`]);
    assert.equal(r.out, "uring Operation not permitted\nx32 Operation not permitted\n", r.err);
  },
);

hostTest(
  "P-SBX-3 under the socket filter ptrace, process_vm_readv and pidfd_open of pid 1 fail with EPERM; of another process they work",
  LINUX,
  async () => {
    // harmless calls: PTRACE_PEEKDATA of a process not traced (ESRCH), a read of no bytes, a pidfd
    const py = `import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
def call(name, f):
    ctypes.set_errno(0)
    r = f()
    print(name, "ok" if r >= 0 else os.strerror(ctypes.get_errno()))
for pid in (1, os.getppid()):
    call("ptrace", lambda: libc.ptrace(2, pid, 0, 0))
    call("process_vm_readv", lambda: libc.process_vm_readv(pid, None, 0, None, 0, 0))
    call("pidfd_open", lambda: libc.syscall(434, pid, 0))`;
    const r = await filtered(["python3", "-c", py]);
    assert.equal(
      r.out,
      "ptrace Operation not permitted\nprocess_vm_readv Operation not permitted\n" +
        "pidfd_open Operation not permitted\nptrace No such process\nprocess_vm_readv ok\n" +
        "pidfd_open ok\n",
      r.err,
    );
  },
);

hostTest(
  "P-SBX-3 under the socket filter keyctl, add_key and request_key fail with EPERM (keyrings are a uid's and a login session's, not a namespace's); other syscalls work",
  LINUX,
  async () => {
    const py = `import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
add_key, request_key, keyctl = {"x86_64": (248, 249, 250), "aarch64": (217, 218, 219)}[os.uname().machine]
def call(name, *args):
    ctypes.set_errno(0)
    r = libc.syscall(*args)
    print(name, "ok" if r >= 0 else os.strerror(ctypes.get_errno()))
call("keyctl", keyctl, 0, -3, 0)
call("add_key", add_key, b"user", b"shoal-test", b"x", 1, -2)  # the process keyring: gone with it
call("request_key", request_key, b"user", b"shoal-test", None, 0)
call("getpid", 39 if os.uname().machine == "x86_64" else 172)`;
    const r = await filtered(["python3", "-c", py]);
    assert.equal(
      r.out,
      "keyctl Operation not permitted\nadd_key Operation not permitted\n" +
        "request_key Operation not permitted\ngetpid ok\n",
      r.err,
    );
  },
);

hostTest(
  "P-SBX-3 a user who is not root installs the socket filter too",
  await otherUserMissing(null),
  async () => {
    await withTempDir(async (dir) => {
      await Deno.chmod(dir, 0o755);
      const host = unixListener(`${dir}/docker.sock`);
      try {
        const r = await filtered(probe(`${dir}/docker.sock`), AS_OTHER_USER);
        assert.equal(r.out, EXPECTED, r.err);
        assert.equal(host.accepted(), 0, "the host side heard a connection");
      } finally {
        host.close();
      }
    });
  },
);
