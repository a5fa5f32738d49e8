import assert from "node:assert/strict";
import { TokenStore } from "../../../src/kernel/auth/tokens.ts";
import { withTempDir } from "../../_support/temp_dir.ts";
import { mountTmpfs, unmount } from "../../_support/tmpfs.ts";
import { delay } from "../../_support/wait.ts";

const ENTRY = new URL("./_token_cli.ts", import.meta.url).pathname;
const DENO_DIR = Deno.env.get("DENO_DIR") ?? `${Deno.env.get("HOME")}/.cache/deno`;

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `token ARGS` in a child with exactly `env` (plus DENO_DIR so deno finds its cache). */
async function token(args: string[], env: Record<string, string>): Promise<Run> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", ENTRY, ...args],
    clearEnv: true,
    env: { DENO_DIR, NO_COLOR: "1", ...env },
    stdin: "null",
  }).output();
  const text = new TextDecoder();
  return { code: out.code, stdout: text.decode(out.stdout), stderr: text.decode(out.stderr) };
}

const mode = (path: string) => Deno.statSync(path).mode! & 0o777;

Deno.test("K-CLI-2 token create prints the secret alone on stdout and the id on stderr", async () => {
  await withTempDir(async (dir) => {
    const run = await token(
      ["create", "agent:reviewer", "reviewer", "--cap", "fs.read", "--cap", "net", "--ttl", "60"],
      { XDG_STATE_HOME: `${dir}/xdg` },
    );
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /^[A-Za-z0-9_-]{43}\n$/);
    const match = run.stderr.match(/^created ([0-9a-f]{16}) \(secret shown once\)\n$/);
    assert.ok(match, run.stderr);
    const state = `${dir}/xdg/shoal`;
    assert.equal(mode(state), 0o700);
    assert.equal(mode(`${state}/tokens.json`), 0o600);
    assert.deepEqual(new TokenStore(state).validate(run.stdout.trim()), {
      id: match[1],
      principal: "agent:reviewer",
      profile: "reviewer",
      caps: ["fs.read", "net"],
    });
    const [listed] = new TokenStore(state).list();
    assert.equal(listed.expires_ns! - listed.created_ns, 60n * 1_000_000_000n);
  });
});

Deno.test("K-CLI-2 token options take --x=v as well as --x v, mixed with operands in any order", async () => {
  await withTempDir(async (dir) => {
    const run = await token(
      [
        "create",
        "--cap=fs.read",
        "agent:eq",
        "--ttl=60",
        "eq",
        "--cap",
        "net",
        `--state-dir=${dir}`,
      ],
      {},
    );
    assert.equal(run.code, 0, run.stderr);
    const [listed] = new TokenStore(dir).list();
    assert.deepEqual([listed.principal, listed.profile], ["agent:eq", "eq"]);
    assert.equal(listed.expires_ns! - listed.created_ns, 60n * 1_000_000_000n);
    assert.deepEqual(new TokenStore(dir).validate(run.stdout.trim())?.caps, ["fs.read", "net"]);
    const list = await token(["list", `--state-dir=${dir}`], {});
    assert.equal(list.code, 0, list.stderr);
    assert.match(list.stdout, /\tagent:eq\teq\tactive\n$/);
  });
});

Deno.test("G-STATE-1 the store lives in --state-dir, else XDG_STATE_HOME/shoal, else HOME/.local/state/shoal", async () => {
  await withTempDir(async (dir) => {
    assert.equal((await token(["create", "a:home", "p"], { HOME: dir })).code, 0);
    assert.ok(Deno.statSync(`${dir}/.local/state/shoal/tokens.json`).isFile);
    const both = { HOME: dir, XDG_STATE_HOME: `${dir}/xdg` };
    assert.equal((await token(["create", "a:xdg", "p"], both)).code, 0);
    assert.ok(Deno.statSync(`${dir}/xdg/shoal/tokens.json`).isFile);
    const flagged = await token(["create", "a:flag", "p", "--state-dir", `${dir}/explicit`], both);
    assert.equal(flagged.code, 0);
    assert.equal(new TokenStore(`${dir}/explicit`).list()[0].principal, "a:flag");
    const none = await token(["list"], {});
    assert.equal(none.code, 1);
    assert.match(none.stderr, /--state-dir/);
  });
});

Deno.test("K-CLI-2 token list prints id, principal, profile and state, tab-separated", async () => {
  await withTempDir(async (dir) => {
    const env = { HOME: dir };
    const flag = ["--state-dir", `${dir}/s`];
    const id = async (args: string[]) => {
      const run = await token(["create", ...args, ...flag], env);
      return run.stderr.split(" ")[1];
    };
    const active = await id(["agent:a", "builder"]);
    const revoked = await id(["agent:b", "reviewer"]);
    const expired = await id(["agent:c", "ci", "--ttl", "1"]);
    await delay(1100); // past the 1 s ttl whatever the machine's speed
    const revoke = await token(["revoke", revoked, ...flag], env);
    assert.equal(revoke.code, 0, revoke.stderr);
    assert.equal(revoke.stdout, "");
    const list = await token(["list", ...flag], env);
    assert.equal(list.code, 0);
    assert.equal(
      list.stdout,
      `${active}\tagent:a\tbuilder\tactive\n` +
        `${revoked}\tagent:b\treviewer\trevoked\n` +
        `${expired}\tagent:c\tci\texpired\n`,
    );
  });
});

Deno.test("K-CLI-2 token revoke of an unknown id fails with a message and exit 1", async () => {
  await withTempDir(async (dir) => {
    const run = await token(["revoke", "0123456789abcdef", "--state-dir", dir], {});
    assert.equal(run.code, 1);
    assert.equal(run.stdout, "");
    assert.match(run.stderr, /unknown token id: 0123456789abcdef/);
  });
});

Deno.test("K-CLI-1 bad token usage exits 2 with usage on stderr", async () => {
  await withTempDir(async (dir) => {
    const flag = ["--state-dir", dir];
    for (
      const args of [
        [],
        ["frobnicate"],
        ["create", "agent:a"],
        ["create", "agent:a", "p", "extra"],
        ["create", "agent:a", "p", "--ttl", "soon"],
        ["create", "agent:a", "p", "--ttl", "-5"],
        ["create", "agent:a", "p", "--ttl", "0"],
        ["create", "agent:a\nb\tc\td\tactive", "p"],
        ["create", "agent a", "p"],
        ["create", "agent:a", "p", "--cap"],
        ["create", "agent:a", "p", "--bogus", "x"],
        ["create", "agent:a", "p", "--ttl=soon"],
        ["create", "agent:a", "p", "--bogus=x"],
        ["list", "--cap=x"],
        ["list", "--cap", "x"],
        ["revoke"],
      ]
    ) {
      const run = await token([...args, ...flag], {});
      assert.equal(run.code, 2, `token ${args.join(" ")}: ${run.stderr}`);
      assert.equal(run.stdout, "");
      assert.match(run.stderr, /usage: shoal-kernel token/);
    }
    assert.deepEqual([...Deno.readDirSync(dir)], []);
  });
});

Deno.test({
  name:
    "K-CLI-2/T-TOK-3 token revoke and create on a full file system exit 1 naming the token store and saying the token is still active; the store is left as it was, with no temporary file" +
    (Deno.build.os !== "linux" || Deno.uid() !== 0
      ? " [ignored: needs Linux and root to mount a tmpfs]"
      : ""),
  ignore: Deno.build.os !== "linux" || Deno.uid() !== 0,
  fn: async () => {
    await withTempDir(async (dir) => {
      const mounted = mountTmpfs(dir, "1m");
      assert.equal(mounted, null, `${mounted}`);
      try {
        const state = `${dir}/state`;
        const env = { XDG_STATE_HOME: "/nonexistent" };
        const created = await token(["create", "agent:a", "a", "--state-dir", state], env);
        assert.equal(created.code, 0, created.stderr);
        const id = created.stderr.match(/created ([0-9a-f]{16})/)![1];
        const before = await Deno.readTextFile(`${state}/tokens.json`);
        new Deno.Command("dd", {
          args: ["if=/dev/zero", `of=${dir}/ballast`, "bs=4k"],
          stderr: "null",
        })
          .outputSync();
        const revoked = await token(["revoke", id, "--state-dir", state], env);
        assert.equal(revoked.code, 1, revoked.stderr);
        assert.ok(revoked.stderr.includes(`${state}/tokens.json`), revoked.stderr);
        assert.match(revoked.stderr, new RegExp(`token ${id} is still active`));
        const again = await token(["create", "agent:b", "b", "--state-dir", state], env);
        assert.equal(again.code, 1, again.stderr);
        assert.ok(again.stderr.includes(`${state}/tokens.json`), again.stderr);
        assert.equal(await Deno.readTextFile(`${state}/tokens.json`), before);
        assert.deepEqual(
          [...Deno.readDirSync(state)].map((e) => e.name).sort(),
          ["tokens.json", "tokens.json.lock"],
        );
      } finally {
        unmount(dir);
      }
    });
  },
});
