/**
 * What a sandboxed agent's run shares with the host through the Linux kernel itself rather than
 * through files, sockets or processes (SPEC §7.8 P-SBX-3): its settings (`/proc/sys`) and its key
 * store (keyrings). A kernel run as root (a container, a CI machine) runs its sandboxes as uid 0
 * without capabilities and without a user namespace, which owns both.
 */
import assert from "node:assert/strict";
import { exec } from "../../_support/exec.ts";
import {
  launchKernel,
  startKernel,
  startKernelWithAgent,
  type TestKernel,
} from "../../_support/kernel.ts";
import { HOST_SANDBOX, hostTest, NEEDS_TIER_B } from "../../_support/host.ts";
import { createToken, PROJECT_AGENT, writePolicy } from "../../_support/principals.ts";
import type { Rec } from "../../_support/rec.ts";
import { KERNEL_BIN, sandbox } from "../../_support/sandbox.ts";

/** The stdout of `python` run by the agent in its project, whatever its status. */
async function agentPython(k: TestKernel, token: string, python: string): Promise<string> {
  const proj = `${k.box.dir}/home/proj`;
  await Deno.mkdir(proj, { recursive: true });
  await Deno.writeTextFile(`${proj}/probe.py`, python);
  await exec(await k.attach("work"), `cd ${proj}`);
  const agent = await k.attach("work", token);
  const r = await exec(agent, "python3 probe.py > probe.out 2>&1; cat probe.out", {
    position: "value",
  });
  const out = ((r.value as Rec).out as Rec).v;
  return typeof out === "string" ? out : JSON.stringify(r.value);
}

/** Opens each path for writing (never writes) and prints `path errno-name` or `path ok`. */
const OPEN_FOR_WRITING = String.raw`
import errno, os
for path in ["/proc/sys/kernel/core_pattern", "/proc/sys/kernel/hostname", "/proc/sys/vm/drop_caches"]:
    try:
        os.close(os.open(path, os.O_WRONLY))
        print(path, "ok")
    except OSError as e:
        print(path, errno.errorcode[e.errno])
print("ostype", open("/proc/sys/kernel/ostype").read().strip())
`;

hostTest(
  "P-SBX-3 a sandboxed run cannot change the host kernel's settings: /proc/sys is read-only inside (a kernel run as root let an agent open kernel.core_pattern for writing, a program the host then runs as root at the next crash), and stays readable",
  NEEDS_TIER_B,
  async () => {
    const { kernel: k, token } = await startKernelWithAgent("agent:c", PROJECT_AGENT);
    try {
      const out = await agentPython(k, token, OPEN_FOR_WRITING);
      const lines = out.trim().split("\n");
      for (const line of lines.slice(0, 3)) assert.match(line, / (EROFS|EACCES|EPERM)$/, out);
      assert.equal(lines[3], "ostype Linux", out);
    } finally {
      await k.cleanup();
    }
  },
);

/**
 * Run as the kernel's parent: joins a new session keyring of its own (so no other process on the
 * host sees the key), keeps `argv[1]` in it as a `user` key named `shoal-test`, writes the id of
 * its user keyring to `argv[2]`, then execs the kernel (`argv[3:]`), which inherits that keyring.
 */
const KEEP_A_KEY = String.raw`
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
nr = {"x86_64": (248, 250), "aarch64": (217, 219)}[os.uname().machine]
assert libc.syscall(nr[1], 1, None) > 0  # KEYCTL_JOIN_SESSION_KEYRING, anonymous
assert libc.syscall(nr[0], b"user", b"shoal-test", sys.argv[1].encode(), len(sys.argv[1]), -3) > 0
open(sys.argv[2], "w").write(str(libc.syscall(nr[1], 0, -4, 0)))  # KEYCTL_GET_KEYRING_ID of @u
os.execv(sys.argv[3], sys.argv[3:])
`;

/** Prints the payload of the `shoal-test` key of the session keyring, then the user keyring's id. */
const READ_THE_KEY = String.raw`
import ctypes, errno, os
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
keyctl = {"x86_64": 250, "aarch64": 219}[os.uname().machine]
key = libc.syscall(keyctl, 10, -3, b"user", b"shoal-test", 0)  # KEYCTL_SEARCH
if key < 0:
    print("search", errno.errorcode[ctypes.get_errno()])
else:
    buf = ctypes.create_string_buffer(256)
    n = libc.syscall(keyctl, 11, key, buf, 256)  # KEYCTL_READ
    print("read", buf.raw[:n].decode() if n >= 0 else errno.errorcode[ctypes.get_errno()])
user = libc.syscall(keyctl, 0, -4, 0)
print("user", user if user >= 0 else errno.errorcode[ctypes.get_errno()])
try:
    print("listed", [line.split()[-2] for line in open("/proc/keys")])
except OSError as e:
    print("listed", errno.errorcode[e.errno])
`;

hostTest(
  "P-SBX-3 a sandboxed run reaches neither the kernel's session keyring nor its uid's user keyring: a secret the human keeps there (systemd's cached disk passphrases, Kerberos tickets) was read by the agent with keyctl(2), and its name listed in /proc/keys",
  NEEDS_TIER_B,
  async () => {
    const box = await sandbox();
    const secret = `s3cret-${crypto.randomUUID()}`;
    const userKeyring = `${box.dir}/user-keyring`;
    const { secret: token } = await createToken(box, "agent:c", "c");
    const policy = await writePolicy(box, { "agent:c": PROJECT_AGENT });
    const socket = box.socket();
    const k = await launchKernel(
      box,
      ["--socket", socket, "--policy", policy],
      socket,
      {},
      ["python3", "-c", KEEP_A_KEY, secret, userKeyring, KERNEL_BIN],
    );
    try {
      const out = await agentPython(k, token, READ_THE_KEY);
      assert.ok(!out.includes(secret), `the agent read the human's key: ${out}`);
      assert.ok(!out.includes("shoal-test"), `the agent saw the human's key listed: ${out}`);
      const user = /^user (.*)$/m.exec(out)?.[1];
      assert.ok(user !== undefined, out);
      assert.notEqual(
        user,
        await Deno.readTextFile(userKeyring),
        `the host's user keyring: ${out}`,
      );
    } finally {
      await k.cleanup();
    }
  },
);

/** Changes the mode of what /proc/1/exe (bwrap's init) leads to to the mode it has, then its times. */
const TOUCH_INIT_EXE = String.raw`
import errno, os, stat
st = os.stat("/proc/1/exe")
for name, change in [("chmod", lambda: os.chmod("/proc/1/exe", stat.S_IMODE(st.st_mode))),
                     ("utime", lambda: os.utime("/proc/1/exe", (st.st_atime, st.st_mtime)))]:
    try:
        change(); print(name, "ok")
    except OSError as e:
        print(name, errno.errorcode[e.errno])
`;

hostTest(
  "P-SBX-3 a sandboxed run cannot change the host's bwrap through /proc/1/exe: bwrap's init is its own uid's, so the link leads to the file on the host's writable mount, and a run of a kernel run as root (which owns /usr/bin/bwrap) could chmod it (not executable: the next kernel finds tier D and runs the agent unconfined) or set its times",
  NEEDS_TIER_B,
  async () => {
    const bwrap = HOST_SANDBOX.tier === "B" ? HOST_SANDBOX.bwrap : "";
    const before = (await Deno.stat(bwrap)).ctime?.getTime();
    const { kernel: k, token } = await startKernelWithAgent("agent:c", PROJECT_AGENT);
    try {
      const out = await agentPython(k, token, TOUCH_INIT_EXE);
      assert.equal((await Deno.stat(bwrap)).ctime?.getTime(), before, `${bwrap} changed: ${out}`);
      // the sandbox still starts
      const agent = await k.attach("work", token);
      const r = await exec(agent, "echo still", { position: "value" });
      assert.equal(((r.value as Rec).out as Rec).v, "still\n");
    } finally {
      await k.cleanup();
    }
  },
);

Deno.test({
  name:
    "P-SBX-3 needs deciding (which uid a root kernel's sandbox runs as, or no tier B for a root kernel): a kernel run as root runs its sandboxes as uid 0, so a run reads the root-only files of the system roots it is shown (/etc/shadow, /etc/ssh host keys, /etc/ssl/private), which a kernel run by a user cannot",
  ignore: true,
  fn: async () => {
    const { kernel: k, token } = await startKernelWithAgent("agent:c", PROJECT_AGENT);
    try {
      const out = await agentPython(
        k,
        token,
        `import errno
try:
    open("/etc/shadow").read(); print("read")
except OSError as e:
    print(errno.errorcode[e.errno])
`,
      );
      assert.match(out, /^(EACCES|ENOENT)$/m, out);
    } finally {
      await k.cleanup();
    }
  },
});

Deno.test({
  name:
    "P-SBX-3 needs deciding (whether a read root's FIFOs are the agent's to write, as its sockets are not): a read-only bind does not stop open(2) of a FIFO for writing, so a run writes into a named pipe of the human's below a read root (a tool's command FIFO), the Unix-socket rule's twin",
  ignore: true,
  fn: async () => {
    const box = await sandbox();
    const shared = `${box.dir}/home/shared`;
    await Deno.mkdir(shared, { recursive: true });
    const fifo = `${shared}/commands`;
    const made = await new Deno.Command("mkfifo", { args: [fifo] }).output();
    assert.ok(made.success);
    const { secret: token } = await createToken(box, "agent:c", "c");
    const policy = await writePolicy(box, {
      "agent:c": {
        ...PROJECT_AGENT,
        fs: { ...PROJECT_AGENT.fs, read: ["~/proj/**", "~/shared/**"] },
      },
    });
    const k = await startKernel(["--policy", policy], box);
    try {
      const out = await agentPython(
        k,
        token,
        `import errno, os
try:
    fd = os.open(${JSON.stringify(fifo)}, os.O_WRONLY | os.O_NONBLOCK); print("opened")
except OSError as e:
    print(errno.errorcode[e.errno])
`,
      );
      // ENXIO (no reader) means the open for writing was let through
      assert.match(out, /^(EROFS|EACCES|EPERM)$/m, out);
    } finally {
      await k.cleanup();
    }
  },
});

Deno.test({
  name:
    "P-SBX-3/P-SBX-6 needs deciding (whether the sandbox keeps set-user-ID and set-group-ID bits off what it writes): a run makes a set-user-ID executable of the kernel's uid in its write root (root's under a root kernel), which any local user who reaches the project then runs as that uid on the host, where the bind's nosuid does not apply",
  ignore: true,
  fn: async () => {
    const { kernel: k, token } = await startKernelWithAgent("agent:c", PROJECT_AGENT);
    try {
      await agentPython(
        k,
        token,
        `import os, shutil
shutil.copy("/bin/sh", "shell")
try:
    os.chmod("shell", 0o4755)
except OSError:
    pass
`,
      );
      const mode = (await Deno.stat(`${k.box.dir}/home/proj/shell`)).mode!;
      assert.equal(mode & 0o6000, 0, `mode ${mode.toString(8)}`);
    } finally {
      await k.cleanup();
    }
  },
});
