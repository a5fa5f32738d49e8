/** The protected paths a view binds read-only inside its writable roots (P-SBX-6). */
import assert from "node:assert/strict";
import { protection } from "../../../src/kernel/sandbox/protected_paths.ts";
import { SCAN_DEPTH, SCAN_DIR_LIMIT } from "../../../src/kernel/sandbox/scan_listings.ts";
import { holdPlaceholders } from "../../../src/kernel/sandbox/placeholders.ts";
import { withTempDir } from "../../_support/temp_dir.ts";
import { exists } from "../../_support/paths.ts";
import { hostGit } from "../../_support/git.ts";
import { mountTmpfs, unmount } from "../../_support/tmpfs.ts";
import { WATCH_LIMIT } from "../../../src/kernel/sandbox/dir_changes.ts";

Deno.test("below a root, existing protected names down to the scan depth are protected, their parents pinned; node_modules is not entered", async () => {
  await withTempDir(async (dir) => {
    const root = await Deno.realPath(dir);
    const at = (depth: number) => Array.from({ length: depth }, (_, i) => `d${i}`).join("/");
    for (const depth of [1, SCAN_DEPTH - 1, SCAN_DEPTH]) {
      await Deno.mkdir(`${root}/${at(depth)}`, { recursive: true });
      await Deno.writeTextFile(`${root}/${at(depth)}/.envrc`, "");
    }
    await Deno.mkdir(`${root}/node_modules/p/.vscode`, { recursive: true });
    await Deno.mkdir(`${root}/d0/.git/hooks`, { recursive: true });
    await Deno.writeTextFile(`${root}/d0/.git/config`, "");
    const { paths, pins } = protection([root], []);
    const deep = paths.filter((p) => !p.absent).map((p) => p.path);
    assert.deepEqual(deep, [
      `${root}/d0/.envrc`,
      `${root}/d0/.git/config`,
      `${root}/d0/.git/hooks`,
      `${root}/${at(SCAN_DEPTH - 1)}/.envrc`,
    ]);
    assert.deepEqual(pins.slice(0, 2), [`${root}/d0`, `${root}/d0/.git`]);
    assert.ok(!pins.includes(root), "the root itself is a mount already");
    const absent = paths.filter((p) => p.absent).map((p) => p.path.slice(root.length + 1));
    assert.ok(absent.includes(".envrc") && absent.includes(".vscode"));
    assert.ok(!absent.includes(".git/hooks"), "no .git at the root: nothing of it is held");
  });
});

Deno.test("writable_protected names are left out; a placeholder is made once, kept while held and removed after the last release", async () => {
  await withTempDir(async (dir) => {
    const root = await Deno.realPath(dir);
    const p = protection([root], [".envrc", ".git/config"]);
    assert.ok(!p.paths.some((x) => x.path.endsWith("/.envrc")));
    const first = holdPlaceholders(p);
    const second = holdPlaceholders(protection([root], [".envrc"]));
    assert.ok(Deno.statSync(`${root}/.bashrc`).isDirectory);
    first();
    assert.ok(Deno.statSync(`${root}/.bashrc`).isDirectory, "still held");
    second();
    assert.deepEqual([...Deno.readDirSync(root)], [], "nothing left behind");
  });
});

Deno.test("a scan sees protected names made since the last one, in directories it had read long before and right before", async () => {
  await withTempDir(async (dir) => {
    const root = await Deno.realPath(dir);
    await Deno.mkdir(`${root}/d0/d1/d2`, { recursive: true });
    await Deno.mkdir(`${root}/other`);
    // older than any window in which a directory's stamp could miss a change: its listing is reused
    await new Promise((resolve) => setTimeout(resolve, 2100));
    const existing = () => protection([root], []).paths.filter((p) => !p.absent).map((p) => p.path);
    assert.deepEqual(existing(), []);
    assert.deepEqual(existing(), [], "read again from the directories' listings of the last scan");
    await Deno.writeTextFile(`${root}/d0/d1/.envrc`, "");
    await Deno.mkdir(`${root}/d0/d1/d2/.git/hooks`, { recursive: true });
    await Deno.writeTextFile(`${root}/.bashrc`, "");
    assert.deepEqual(existing(), [
      `${root}/.bashrc`,
      `${root}/d0/d1/.envrc`,
      `${root}/d0/d1/d2/.git/hooks`,
    ]);
    // at once after that scan, in a directory it read and one it had not entered before
    await Deno.mkdir(`${root}/d0/d1/.vscode`);
    await Deno.rename(`${root}/other`, `${root}/d0/moved`);
    await Deno.writeTextFile(`${root}/d0/moved/.mcp.json`, "");
    assert.deepEqual(existing(), [
      `${root}/.bashrc`,
      `${root}/d0/d1/.envrc`,
      `${root}/d0/d1/.vscode`,
      `${root}/d0/d1/d2/.git/hooks`,
      `${root}/d0/moved/.mcp.json`,
    ]);
  });
});

/** Makes `count` empty files (or directories, `dirs`) named 0, 1, … in `dir`, by xargs. */
async function flood(dir: string, count: number, dirs = false): Promise<void> {
  const made = await new Deno.Command("sh", {
    args: ["-c", `cd "$1" && seq 0 ${count - 1} | xargs ${dirs ? "mkdir" : "touch"}`, "sh", dir],
  }).output();
  assert.equal(made.code, 0, new TextDecoder().decode(made.stderr));
}

Deno.test("flooding the root with entries cuts no scan short: a repository and a .envrc made below it after the flood are protected from the next scan on, and one that is gone is not bound (a scan stopped after 10,000 entries, leaving them writable)", async () => {
  await withTempDir(async (dir) => {
    const root = await Deno.realPath(dir);
    await Deno.mkdir(`${root}/deep`);
    const below = () =>
      protection([root], []).paths.filter((p) => !p.absent && p.path.startsWith(`${root}/deep`))
        .map((p) => p.path);
    assert.deepEqual(below(), []);
    await flood(root, 15_000);
    await Deno.mkdir(`${root}/deep/repo/.git/hooks`, { recursive: true });
    await Deno.writeTextFile(`${root}/deep/repo/.git/config`, "");
    await Deno.writeTextFile(`${root}/deep/.envrc`, "");
    const all = [
      `${root}/deep/.envrc`,
      `${root}/deep/repo/.git/config`,
      `${root}/deep/repo/.git/hooks`,
    ];
    assert.deepEqual(below(), all);
    assert.deepEqual(below(), all, "and again, on the listings kept");
    Deno.removeSync(`${root}/deep/.envrc`);
    assert.deepEqual(below(), all.slice(1), "one that is gone is not bound");
    assert.deepEqual(
      protection([root], [".git/hooks"]).paths.map((p) => p.path).filter((p) =>
        p.startsWith(`${root}/deep`)
      ),
      [
        `${root}/deep/repo/.git/commondir`,
        `${root}/deep/repo/.git/config`,
        `${root}/deep/repo/.git/config.worktree`,
      ],
    );
  });
});

Deno.test("a repository config that is a FIFO (an agent's, in a repository it made) neither blocks the scan nor is read", async () => {
  await withTempDir(async (dir) => {
    const root = await Deno.realPath(dir);
    await Deno.mkdir(`${root}/sub/.git/hooks`, { recursive: true });
    const made = await new Deno.Command("mkfifo", { args: [`${root}/sub/.git/config`] }).output();
    assert.equal(made.code, 0);
    const found = protection([root], []).paths.map((p) => p.path);
    assert.ok(found.includes(`${root}/sub/.git/config`), "still bound read-only");
  });
});

/** `protection` of `root` as [path below root, absent, placeholder text] rows, in `.git` and `common*`/`elsewhere`. */
function gitRows(root: string, lifted: readonly string[] = []): [string, boolean, string?][] {
  return protection([root], lifted).paths
    .filter((p) => /^\/(\.git\/|common|elsewhere)/.test(p.path.slice(root.length)))
    .map((p) => {
      const row: [string, boolean, string?] = [p.path.slice(root.length + 1), p.absent];
      if (p.text !== undefined) row.push(p.text);
      return row;
    });
}

Deno.test("a root repository's commondir and config.worktree are protected, held when absent by read-only files git reads as their absence ('.' names the git directory itself)", async () => {
  await withTempDir(async (dir) => {
    const root = await Deno.realPath(dir);
    await Deno.mkdir(`${root}/.git/hooks`, { recursive: true });
    await Deno.writeTextFile(`${root}/.git/config`, "");
    assert.deepEqual(gitRows(root), [
      [".git/commondir", true, ".\n"],
      [".git/config", false],
      [".git/config.worktree", true, ""],
      [".git/hooks", false],
    ]);
    assert.deepEqual(gitRows(root, [".git/commondir", ".git/config.worktree"]), [
      [".git/config", false],
      [".git/hooks", false],
    ]);
    const release = holdPlaceholders(protection([root], []));
    const commondir = Deno.lstatSync(`${root}/.git/commondir`);
    assert.ok(commondir.isFile);
    assert.equal(commondir.mode! & 0o777, 0o444);
    assert.equal(Deno.readTextFileSync(`${root}/.git/commondir`), ".\n");
    assert.equal(Deno.readTextFileSync(`${root}/.git/config.worktree`), "");
    assert.deepEqual(gitRows(root)[0], [".git/commondir", true, ".\n"], "its own is no commondir");
    release();
    assert.deepEqual([...Deno.readDirSync(`${root}/.git`)].map((e) => e.name).sort(), [
      "config",
      "hooks",
    ]);
  });
});

Deno.test("a file placeholder whose text was changed while held is the user's: it stays", async () => {
  await withTempDir(async (dir) => {
    const root = await Deno.realPath(dir);
    await Deno.mkdir(`${root}/.git`);
    const release = holdPlaceholders(protection([root], []));
    Deno.chmodSync(`${root}/.git/config.worktree`, 0o644);
    Deno.writeTextFileSync(`${root}/.git/config.worktree`, "[core]\n");
    release();
    assert.equal(Deno.readTextFileSync(`${root}/.git/config.worktree`), "[core]\n");
    assert.ok(!exists(`${root}/.git/commondir`), "the untouched one went");
  });
});

Deno.test("the directory an existing commondir names keeps its config and hooks protected, and a missing one cannot be made; the commondir itself is read-only", async () => {
  await withTempDir(async (dir) => {
    const root = await Deno.realPath(dir);
    await Deno.mkdir(`${root}/.git`);
    await Deno.mkdir(`${root}/common/hooks`, { recursive: true });
    await Deno.writeTextFile(`${root}/common/config`, "[core]\n\thooksPath = hooked\n");
    await Deno.writeTextFile(`${root}/.git/commondir`, "../common\n");
    assert.deepEqual(gitRows(root), [
      [".git/commondir", false],
      [".git/config.worktree", true, ""],
      ["common/config", false],
      ["common/hooks", false],
    ]);
    assert.ok(protection([root], []).paths.some((p) => p.path === `${root}/hooked`));
    await Deno.writeTextFile(`${root}/.git/commondir`, `${root}/elsewhere`);
    assert.deepEqual(gitRows(root).filter(([path]) => !path.startsWith(".git/")), [
      ["elsewhere", true],
    ]);
  });
});

Deno.test("a .git file's git directory in a write root (a linked worktree's) keeps its commondir and config.worktree, and its common directory's config and hooks, read-only; so do the main repository's linked worktrees, their absent config.worktree held", async () => {
  await withTempDir(async (dir) => {
    const root = await Deno.realPath(dir);
    await Deno.mkdir(`${root}/main`);
    await hostGit(`${root}/main`, "init", "-q");
    await hostGit(`${root}/main`, "commit", "-q", "--allow-empty", "-m", "x");
    await hostGit(`${root}/main`, "worktree", "add", "-q", `${root}/main/wt`);
    await hostGit(`${root}/main`, "worktree", "add", "-q", `${root}/wt2`);
    const wtRoot = `${root}/wt2`;
    // the linked worktree as a write root: its .git file, and what it names
    const paths = protection([wtRoot, `${root}/main`], []).paths;
    const existing = paths.filter((p) => !p.absent).map((p) => p.path);
    for (
      const path of [
        `${wtRoot}/.git`,
        `${root}/main/.git/worktrees/wt2/commondir`,
        `${root}/main/.git/config`,
        `${root}/main/.git/hooks`,
        `${root}/main/.git/worktrees/wt/commondir`,
        `${root}/main/wt/.git`,
      ]
    ) assert.ok(existing.includes(path), path);
    const held = paths.filter((p) => p.absent).map((p) => p.path);
    assert.ok(held.includes(`${root}/main/.git/worktrees/wt2/config.worktree`));
    assert.ok(held.includes(`${root}/main/.git/worktrees/wt/config.worktree`), "below a root too");
    // the worktree alone as a write root: the main repository is not writable, nothing of it is bound
    const alone = protection([wtRoot], []).paths.map((p) => p.path);
    assert.ok(alone.every((p) => p.startsWith(`${wtRoot}/`)), alone.join(" "));
  });
});

Deno.test("the files a repository's config includes are protected as git reads them: each relative to the file naming it, an entry on its header's line, quoted, includeIf whatever its condition, not under ~, and a file including itself ends", async () => {
  await withTempDir(async (dir) => {
    const root = await Deno.realPath(dir);
    await Deno.mkdir(`${root}/.git/hooks`, { recursive: true });
    await Deno.mkdir(`${root}/conf`);
    await Deno.writeTextFile(
      `${root}/.git/config`,
      [
        "[core]",
        "\tbare = false",
        '[include] path = "../conf/a.inc" ; shared',
        '[includeIf "onbranch:main"]',
        "\tpath = ../absent.inc",
        "[include]",
        "\tpath = ~/.gitconfig-work",
        "\tpath = /elsewhere/outside.inc",
      ].join("\n"),
    );
    await Deno.writeTextFile(`${root}/conf/a.inc`, "[include]\n\tpath = b.inc\n\tpath = a.inc\n");
    await Deno.writeTextFile(`${root}/conf/b.inc`, "[core]\n\thooksPath = hooks-from-b\n");
    const { paths } = protection([root], []);
    const at = (path: string) => paths.find((p) => p.path === path);
    assert.deepEqual(at(`${root}/conf/a.inc`), {
      path: `${root}/conf/a.inc`,
      dir: false,
      absent: false,
    });
    assert.deepEqual(at(`${root}/conf/b.inc`), {
      path: `${root}/conf/b.inc`,
      dir: false,
      absent: false,
    });
    assert.deepEqual(at(`${root}/absent.inc`), {
      path: `${root}/absent.inc`,
      dir: false,
      absent: true,
      text: "",
    });
    // core.hooksPath set in an included file counts; relative to the work tree, as git takes it
    assert.deepEqual(at(`${root}/hooks-from-b`), {
      path: `${root}/hooks-from-b`,
      dir: true,
      absent: true,
    });
    assert.equal(paths.some((p) => p.path.includes("gitconfig-work")), false);
    assert.equal(paths.some((p) => p.path.includes("outside.inc")), false);
    // a protected name the config includes is held by an empty file, not the usual directory
    await Deno.writeTextFile(`${root}/.git/config`, "[include]\n\tpath = ../.gitconfig\n");
    assert.deepEqual(protection([root], []).paths.find((p) => p.path === `${root}/.gitconfig`), {
      path: `${root}/.gitconfig`,
      dir: false,
      absent: true,
      text: "",
    });
    // lifting .git/config lifts what it includes
    const lifted = protection([root], [".git/config"]).paths;
    assert.equal(lifted.some((p) => p.path.endsWith(".inc")), false);
  });
});

Deno.test("a scan reads a directory of 15,000 entries whole without building an object of each (Deno's readDirSync: a million entries an agent made cost the kernel seconds and hundreds of MiB at every exec); the protected names in it and below it are found", async () => {
  await withTempDir(async (dir) => {
    const root = await Deno.realPath(dir);
    await flood(root, 15_000);
    await Deno.mkdir(`${root}/.vscode`);
    await Deno.mkdir(`${root}/sub`);
    await flood(`${root}/sub`, 15_000);
    await Deno.writeTextFile(`${root}/sub/.envrc`, "");
    // the directories the scan has the runtime's directory reader build entries of
    const readDir = Deno.readDirSync;
    const built: string[] = [];
    Deno.readDirSync = (path: string | URL) => {
      built.push(String(path));
      return readDir(path);
    };
    let found;
    try {
      found = protection([root], []);
    } finally {
      Deno.readDirSync = readDir;
    }
    assert.deepEqual(built.filter((path) => path === root || path === `${root}/sub`), []);
    assert.deepEqual(found.paths.find((p) => p.path === `${root}/.vscode`), {
      path: `${root}/.vscode`,
      dir: true,
      absent: false,
    });
    assert.ok(found.paths.some((p) => p.path === `${root}/sub/.envrc` && !p.absent));
  });
});

Deno.test("a protected directory a policy lifts is scanned like any other: the protected names below it are found", async () => {
  await withTempDir(async (dir) => {
    const root = await Deno.realPath(dir);
    await Deno.mkdir(`${root}/sub/.vscode/inner`, { recursive: true });
    await Deno.writeTextFile(`${root}/sub/.vscode/inner/.envrc`, "");
    const found = (lifted: string[]) =>
      protection([root], lifted).paths.filter((p) => !p.absent).map((p) => p.path);
    assert.deepEqual(found([]), [`${root}/sub/.vscode`]);
    assert.deepEqual(found([".vscode"]), [`${root}/sub/.vscode/inner/.envrc`]);
  });
});

Deno.test("a bare repository among the deepest directories a scan reads (whose subdirectories it keeps no list of) is still known by its HEAD, objects/ and refs/", async () => {
  await withTempDir(async (dir) => {
    const root = await Deno.realPath(dir);
    const bare = `${root}/${Array.from({ length: SCAN_DEPTH - 1 }, (_, i) => `d${i}`).join("/")}`;
    await Deno.mkdir(bare, { recursive: true });
    await hostGit(bare, "init", "-q", "--bare");
    const found = protection([root], []).paths.filter((p) => !p.absent).map((p) => p.path);
    assert.ok(found.includes(`${bare}/hooks`) && found.includes(`${bare}/config`), `${found}`);
  });
});

Deno.test("a directory whose name is not UTF-8 holding a repository makes its parent unnamed (its runs are refused): no path could name its hooks and config, which the scan passed over as a directory it could not read; a UTF-8 name beyond ASCII is scanned", async () => {
  await withTempDir(async (dir) => {
    const root = await Deno.realPath(dir);
    await Deno.mkdir(`${root}/sub/é/lib/.git/hooks`, { recursive: true });
    const made = await new Deno.Command("sh", {
      args: ["-c", `cd "$1" && mkdir -p "$(printf 'x\\377')/lib/.git/hooks"`, "sh", `${root}/sub`],
    }).output();
    assert.equal(made.code, 0);
    const found = protection([root], []);
    assert.deepEqual(found.unnamed, [`${root}/sub`]);
    assert.ok(found.paths.some((p) => p.path === `${root}/sub/é/lib/.git/hooks`));
    await new Deno.Command("rm", { args: ["-rf", `${root}/sub`] }).output();
    assert.equal(protection([root], []).unnamed, undefined);
  });
});

Deno.test("P-SBX-4 a directory whose name is not UTF-8 holding no protected name leaves its root's runs alone (a cwd of such a name works as on the host), one holding a .envrc three levels down or a bare repository does not", async () => {
  await withTempDir(async (dir) => {
    const root = await Deno.realPath(dir);
    const sh = (script: string) =>
      new Deno.Command("sh", { args: ["-c", `cd "$1" && ${script}`, "sh", root] }).output();
    assert.equal(
      (await sh(`mkdir -p "$(printf 'x\\377')/in/deep" && touch "$(printf 'x\\377')/in/f"`)).code,
      0,
    );
    assert.equal(protection([root], []).unnamed, undefined);
    assert.equal((await sh(`touch "$(printf 'x\\377')/in/deep/.envrc"`)).code, 0);
    assert.deepEqual(protection([root], []).unnamed, [root]);
    assert.equal((await sh(`rm "$(printf 'x\\377')/in/deep/.envrc"`)).code, 0);
    assert.equal(protection([root], []).unnamed, undefined);
    assert.equal((await sh(`git init -q --bare "$(printf 'x\\377')/in/b.git"`)).code, 0);
    assert.deepEqual(protection([root], []).unnamed, [root]);
  });
});

Deno.test("a nested repository in a project holding two directories of 10,050 files is protected by the first scan (it stopped after 10,000 entries)", async () => {
  await withTempDir(async (dir) => {
    const root = await Deno.realPath(dir);
    for (const data of ["data1", "data2"]) {
      await Deno.mkdir(`${root}/${data}`);
      await flood(`${root}/${data}`, 10_050);
    }
    await Deno.mkdir(`${root}/zz/lib/.git/hooks`, { recursive: true });
    await Deno.writeTextFile(`${root}/zz/lib/.git/config`, "");
    const found = protection([root], []).paths.filter((p) => !p.absent).map((p) => p.path);
    assert.ok(found.includes(`${root}/zz/lib/.git/config`), "its config");
    assert.ok(found.includes(`${root}/zz/lib/.git/hooks`), "its hooks");
  });
});

Deno.test("a root holding more directories than a scan reads is unscanned (its runs are refused), not protected in part; at the bound it is scanned whole", async () => {
  await withTempDir(async (dir) => {
    const root = await Deno.realPath(dir);
    await Deno.mkdir(`${root}/many`);
    // the root, many/, and its subdirectories: one more than a scan reads
    await flood(`${root}/many`, SCAN_DIR_LIMIT - 1, true);
    await Deno.writeTextFile(`${root}/many/0/.envrc`, "");
    const first = protection([root], []);
    assert.deepEqual(first.unscanned, [root]);
    await Deno.remove(`${root}/many/1`);
    const whole = protection([root], []);
    assert.equal(whole.unscanned, undefined);
    assert.ok(whole.paths.some((p) => p.path === `${root}/many/0/.envrc` && !p.absent));
    // rm -rf: Deno.remove takes some 20 s for 100,000 directories
    await new Deno.Command("rm", { args: ["-rf", `${root}/many`] }).output();
  });
});

Deno.test("a repository config swapped for a FIFO right after the scan checked it (by a run of the agent's still going) neither blocks the scan nor is read", async () => {
  await withTempDir(async (dir) => {
    const root = await Deno.realPath(dir);
    const config = `${root}/sub/.git/config`;
    await Deno.mkdir(`${root}/sub/.git/hooks`, { recursive: true });
    await Deno.writeTextFile(config, "[core]\n");
    // The swap happens right after the scan's check that the config is a small regular file
    // worth reading for core.hooksPath; a writer 2 s later would be waited for by a blocking
    // read, which would then take its hooks path.
    const stat = Deno.statSync;
    let looks = 0;
    let writer: Deno.ChildProcess | null = null;
    Deno.statSync = (path: string | URL) => {
      const info = stat(path);
      if (String(path) === config && ++looks === 1) {
        Deno.removeSync(config);
        new Deno.Command("mkfifo", { args: [config] }).outputSync();
        writer = new Deno.Command("sh", {
          args: ["-c", `sleep 2; printf '[core]\\n\\thooksPath = planted\\n' > '${config}'`],
        }).spawn();
      }
      return info;
    };
    let found;
    try {
      found = protection([root], []).paths.map((p) => p.path);
    } finally {
      Deno.statSync = stat;
      (writer as Deno.ChildProcess | null)?.kill();
      await (writer as Deno.ChildProcess | null)?.status;
    }
    assert.ok(looks >= 1, "the config was checked");
    assert.ok(!found.includes(`${root}/sub/planted`), "the FIFO's text was read");
    assert.ok(found.includes(config), "still bound read-only");
  });
});

Deno.test("a core.hooksPath through a symlink is protected where git finds it: inside a root at its real path, outside every root not at all (the kernel made its placeholder there, in the human's ~/.ssh)", async () => {
  await withTempDir(async (dir) => {
    const root = `${await Deno.realPath(dir)}/proj`;
    const outside = `${await Deno.realPath(dir)}/home`;
    await Deno.mkdir(`${outside}/.ssh`, { recursive: true });
    await Deno.mkdir(`${root}/sub/.git/hooks`, { recursive: true });
    await Deno.mkdir(`${root}/real`);
    await Deno.symlink(outside, `${root}/away`);
    await Deno.symlink(`${root}/real`, `${root}/here`);
    const hooksPath = async (path: string) => {
      await Deno.writeTextFile(`${root}/sub/.git/config`, `[core]\n\thooksPath = ${path}\n`);
      return protection([root], []).paths.filter((p) => p.dir && !p.path.includes("/sub/.git/"))
        .filter((p) => !p.path.startsWith(`${root}/.`)).map((p) => p.path);
    };
    assert.deepEqual(await hooksPath("../away/.ssh/authorized_keys"), []);
    assert.deepEqual(await hooksPath("../here/hooks"), [`${root}/real/hooks`]);
  });
});

Deno.test("a relative core.hooksPath in the user's git config (git config --global core.hooksPath .githooks) names a hooks directory in every repository: it is protected there, unless the repository's own config names another", async () => {
  await withTempDir(async (dir) => {
    const root = await Deno.realPath(dir);
    await Deno.mkdir(`${root}/proj/.git/hooks`, { recursive: true });
    await Deno.writeTextFile(`${root}/proj/.git/config`, "[core]\n\tbare = false\n");
    await Deno.writeTextFile(`${root}/user.gitconfig`, "[core]\n\thooksPath = .githooks\n");
    const saved = ["GIT_CONFIG_GLOBAL", "GIT_CONFIG_NOSYSTEM"].map((n) => [n, Deno.env.get(n)]);
    Deno.env.set("GIT_CONFIG_GLOBAL", `${root}/user.gitconfig`);
    Deno.env.set("GIT_CONFIG_NOSYSTEM", "1");
    try {
      const hooksDirs = () =>
        protection([`${root}/proj`], []).paths.filter((p) => p.dir && !p.path.includes("/.git/"))
          .filter((p) => /githooks|mine/.test(p.path)).map((p) => p.path);
      assert.deepEqual(hooksDirs(), [`${root}/proj/.githooks`]);
      await Deno.writeTextFile(`${root}/proj/.git/config`, "[core]\n\thooksPath = mine\n");
      assert.deepEqual(hooksDirs(), [`${root}/proj/mine`]);
    } finally {
      for (const [name, value] of saved) {
        if (value === undefined) Deno.env.delete(name!);
        else Deno.env.set(name!, value);
      }
    }
  });
});

/**
 * Makes `dir` immutable (`chattr +i`: no one, root included, may create in it) for `body`, or
 * returns false when this file system cannot (tmpfs).
 */
async function whileImmutable(dir: string, body: () => Promise<void> | void): Promise<boolean> {
  const chattr = (flag: string) => new Deno.Command("chattr", { args: [flag, dir] }).output();
  if (!(await chattr("+i").catch(() => null))?.success) return false;
  try {
    await body();
  } finally {
    await chattr("-i");
  }
  return true;
}

Deno.test("an absent protected name in a directory the kernel may not create in (another user's repository in the project) is not held: the sandboxed run may not create it either, and a bind of a path that could not be made stopped every exec", async () => {
  await withTempDir(async (dir) => {
    const root = await Deno.realPath(dir);
    await Deno.mkdir(`${root}/vendored/.git/hooks`, { recursive: true });
    await Deno.writeTextFile(`${root}/vendored/.git/config`, "");
    const git = `${root}/vendored/.git`;
    const held = (p: ReturnType<typeof protection>) =>
      p.paths.filter((x) => x.absent).map((x) => x.path);
    assert.ok(
      held(protection([root], [])).includes(`${git}/commondir`),
      "held when it can be made",
    );
    const immutable = await whileImmutable(git, () => {
      const p = protection([root], []);
      assert.ok(!held(p).includes(`${git}/commondir`), "no placeholder it cannot make");
      assert.ok(!held(p).includes(`${git}/config.worktree`));
      assert.ok(p.paths.some((x) => x.path === `${git}/config` && !x.absent), "what exists is");
      const release = holdPlaceholders(p);
      release();
    });
    if (!immutable) {
      console.log("note: chattr +i is not supported here; checked only the writable case");
    }
  });
});

Deno.test("a directory placeholder has the mode of any new directory, so your own editor or client may fill it while a sandbox binds it read-only (a 0555 one failed them with EACCES for any user but root), and is marked sticky", async () => {
  await withTempDir(async (dir) => {
    const root = await Deno.realPath(dir);
    const release = holdPlaceholders(protection([root], []));
    try {
      const made = Deno.lstatSync(`${root}/.vscode`);
      const fresh = `${root}/fresh`;
      Deno.mkdirSync(fresh);
      const umasked = Deno.lstatSync(fresh).mode! & 0o777;
      Deno.removeSync(fresh);
      assert.equal(made.mode! & 0o7777, umasked | 0o1000);
    } finally {
      release();
    }
  });
});

Deno.test("a directory replaced under its name since the last scan (renamed away, another made in its place, or a file system mounted over it) is read anew: the protected names in it are found", async () => {
  await withTempDir(async (dir) => {
    const root = await Deno.realPath(dir);
    await Deno.mkdir(`${root}/a/b/c`, { recursive: true });
    // older than any window in which a directory's stamp could miss a change: its listing is reused
    await new Promise((resolve) => setTimeout(resolve, 2100));
    const existing = () => protection([root], []).paths.filter((p) => !p.absent).map((p) => p.path);
    assert.deepEqual(existing(), []);
    await Deno.rename(`${root}/a/b`, `${root}/a/old`);
    await Deno.mkdir(`${root}/a/b/c/.vscode`, { recursive: true });
    await Deno.rename(`${root}/a/old/c`, `${root}/a/c`);
    await Deno.writeTextFile(`${root}/a/c/.envrc`, "");
    assert.deepEqual(existing(), [`${root}/a/b/c/.vscode`, `${root}/a/c/.envrc`]);
    const mounted = mountTmpfs(`${root}/a/old`, "1m");
    if (mounted !== null) {
      console.log(`skipped the mount: ${mounted}`);
      return;
    }
    try {
      await Deno.writeTextFile(`${root}/a/old/.bashrc`, "");
      assert.deepEqual(existing(), [
        `${root}/a/b/c/.vscode`,
        `${root}/a/c/.envrc`,
        `${root}/a/old/.bashrc`,
      ]);
    } finally {
      unmount(`${root}/a/old`);
    }
    assert.deepEqual(existing(), [`${root}/a/b/c/.vscode`, `${root}/a/c/.envrc`]);
  });
});

Deno.test("in a project of more directories than the scan watches, a protected name made in any of them is found by the next scan", async () => {
  await withTempDir(async (dir) => {
    const root = await Deno.realPath(dir);
    const dirs = Array.from({ length: WATCH_LIMIT + 20 }, (_, i) => `${root}/d${i}`);
    for (const d of dirs) Deno.mkdirSync(d);
    await new Promise((resolve) => setTimeout(resolve, 2100));
    const existing = () => protection([root], []).paths.filter((p) => !p.absent).map((p) => p.path);
    assert.deepEqual(existing(), []);
    assert.deepEqual(existing(), [], "read again from the listings of the last scan");
    for (const d of dirs) Deno.writeTextFileSync(`${d}/.envrc`, "");
    assert.deepEqual(existing(), dirs.map((d) => `${d}/.envrc`).sort());
  });
});

Deno.test("a directory whose parent was renamed away and made again under its name is read anew: its watch is on the one moved away, which tells nothing of the rename (P-SBX-6)", async () => {
  await withTempDir(async (dir) => {
    const root = await Deno.realPath(dir);
    await Deno.mkdir(`${root}/a/b`, { recursive: true });
    const existing = () => protection([root], []).paths.filter((p) => !p.absent).map((p) => p.path);
    assert.deepEqual(existing(), []);
    await Deno.rename(`${root}/a`, `${root}/z`);
    await Deno.mkdir(`${root}/a/b`, { recursive: true });
    await Deno.writeTextFile(`${root}/a/b/.envrc`, "");
    assert.deepEqual(existing(), [`${root}/a/b/.envrc`]);
  });
});

Deno.test("a write root whose parent was renamed away and made again is read anew: a repository cloned in its place has its hooks and config protected (P-SBX-6)", async () => {
  await withTempDir(async (dir) => {
    const parent = await Deno.realPath(dir);
    const root = `${parent}/p/proj`;
    await Deno.mkdir(`${root}/src`, { recursive: true });
    const existing = () => protection([root], []).paths.filter((p) => !p.absent).map((p) => p.path);
    assert.deepEqual(existing(), []);
    await Deno.rename(`${parent}/p`, `${parent}/old`);
    await Deno.mkdir(`${root}/.git/hooks`, { recursive: true });
    await Deno.writeTextFile(`${root}/.git/config`, "");
    assert.deepEqual(existing(), [`${root}/.git/config`, `${root}/.git/hooks`]);
  });
});

Deno.test("a .git symlink protects the repository git finds through it: to a directory, that directory's parts (none of a directory without HEAD, which git passes over); to a .git file, that file and the git directory it names (relative to the link's directory)", async () => {
  await withTempDir(async (dir) => {
    const root = await Deno.realPath(dir);
    for (const gitDir of ["gd", "named", "plain"]) {
      await Deno.mkdir(`${root}/${gitDir}/hooks`, { recursive: true });
      await Deno.writeTextFile(`${root}/${gitDir}/config`, "");
      if (gitDir !== "plain") await Deno.writeTextFile(`${root}/${gitDir}/HEAD`, "");
    }
    for (const sub of ["a", "b", "c"]) await Deno.mkdir(`${root}/${sub}`);
    await Deno.symlink("../gd", `${root}/a/.git`);
    await Deno.writeTextFile(`${root}/gitfile`, "gitdir: ../named\n");
    await Deno.symlink("../gitfile", `${root}/b/.git`);
    await Deno.symlink("../plain", `${root}/c/.git`);
    const { paths, pins } = protection([root], []);
    const existing = paths.filter((p) => !p.absent).map((p) => p.path);
    assert.deepEqual(existing, [
      `${root}/gd/config`,
      `${root}/gd/hooks`,
      `${root}/gitfile`,
      `${root}/named/config`,
      `${root}/named/hooks`,
    ]);
    assert.ok(pins.includes(`${root}/a`) && pins.includes(`${root}/gd`), pins.join(" "));
    assert.ok(!paths.some((p) => p.path.startsWith(`${root}/plain/`)), "no placeholder in plain");
  });
});
