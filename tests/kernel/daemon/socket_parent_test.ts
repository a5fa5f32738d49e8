// G-SOCK-3 step 1 on explicit socket paths: which directory is "the immediate parent" the kernel
// may set to 0700. Run in-process on prepareSocket with the uid it is given, so that no test
// ever lets a root kernel chmod a directory the machine shares.
import assert from "node:assert/strict";
import { prepareSocket } from "../../../src/kernel/daemon/socket_prep.ts";

const asRoot = Deno.uid() === 0;
/** A uid that owns the test's directory: not root, so "/" and the temp root are never its own. */
const OWNER = 61000 + (Deno.pid % 4000) + 1;

/** Permission bits of a path. */
async function mode(path: string): Promise<number> {
  return (await Deno.lstat(path)).mode! & 0o7777;
}

Deno.test({
  name:
    "G-SOCK-3 step 1: the parent of a relative --socket is the working directory, set to 0700 when it is the kernel's; it was taken as /, which a root kernel set to 0700",
  ignore: !asRoot,
  fn: async () => {
    const box = await Deno.realPath(await Deno.makeTempDir({ prefix: "shoal-sockparent-" }));
    const dir = `${box}/cwd`;
    const back = Deno.cwd();
    await Deno.mkdir(dir);
    await Deno.chmod(dir, 0o755);
    await Deno.chown(dir, OWNER, OWNER);
    try {
      Deno.chdir(dir);
      const prepared = await prepareSocket({ path: "k.sock", explicit: true, root: "/" }, OWNER);
      try {
        assert.ok((await Deno.lstat(`${dir}/k.sock`)).isSocket);
        assert.equal(await mode(dir), 0o700);
      } finally {
        prepared.release();
        prepared.listener.close();
      }
    } finally {
      Deno.chdir(back);
      await Deno.remove(box, { recursive: true });
    }
  },
});

Deno.test({
  name:
    "G-SOCK-3 step 1 against G-SOCK-10: a root kernel given --socket /tmp/k.sock sets /tmp (root's, sticky, 1777) to 0700, locking every other user out of /tmp [ignored: needs a SPEC decision: step 1 says an existing parent owned by the euid is set to 0700, G-SOCK-10 trusts a sticky root-owned directory 'like /tmp' as it is; whether step 1 leaves such a shared directory alone (or refuses it) is the SPEC's choice]",
  ignore: true,
  fn: async () => {
    const shared = await Deno.realPath(await Deno.makeTempDir({ prefix: "shoal-sticky-" }));
    await Deno.chmod(shared, 0o1777);
    try {
      const prepared = await prepareSocket(
        { path: `${shared}/k.sock`, explicit: true, root: "/" },
        0,
      );
      try {
        assert.equal(await mode(shared), 0o1777);
      } finally {
        prepared.release();
        prepared.listener.close();
      }
    } finally {
      await Deno.remove(shared, { recursive: true });
    }
  },
});

Deno.test("G-SOCK-3 step 1: a --socket whose parent is a file is refused before any chmod: the file's mode stays (a root kernel given --socket /dev/null/k.sock set /dev/null to 0700)", async () => {
  const box = await Deno.realPath(await Deno.makeTempDir({ prefix: "shoal-sockparent-" }));
  const file = `${box}/notes.txt`;
  await Deno.writeTextFile(file, "mine");
  await Deno.chmod(file, 0o644);
  try {
    await assert.rejects(
      prepareSocket({ path: `${file}/k.sock`, explicit: true, root: "/" }, Deno.uid()!),
      (e: Error) => e.message.includes(`${file} is not a directory`),
    );
    assert.equal(await mode(file), 0o644);
    assert.equal(await Deno.readTextFile(file), "mine");
  } finally {
    await Deno.remove(box, { recursive: true });
  }
});
