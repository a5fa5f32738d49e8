// Each principal's view of a session's shell state (P-SBX-7) and what differs from its start
// (K-EFF-6), on the ShellViews a session keeps.
import assert from "node:assert/strict";
import type { ShellChange } from "../../../src/kernel/bash/shell_state.ts";
import { ShellViews } from "../../../src/kernel/session/shell_views.ts";

const HUMAN = "uid:1000";

/** Entries by name; null removes one. */
type Rec = Record<string, string | null>;

function views(): ShellViews {
  return new ShellViews({
    cwd: "/w",
    env: new Map([["PATH", "/usr/bin"], ["HOME", "/h"], ["XDG_CONFIG_HOME", "/h/.config"]]),
    vars: new Map(),
    funcs: new Map([["greet", "greet () \n{ \n    echo hi\n}"]]),
    aliases: new Map(),
  }, HUMAN);
}

/** A change that sets and unsets entries of each map, and moves the cwd when given. */
function change(parts: Partial<Record<"env" | "vars" | "funcs" | "aliases", Rec>>, cwd?: string) {
  const map = (rec: Rec = {}) => ({
    set: new Map(Object.entries(rec).filter(([, v]) => v !== null) as [string, string][]),
    unset: Object.entries(rec).filter(([, v]) => v === null).map(([k]) => k),
  });
  return {
    cwd: cwd === undefined ? null : { cwd },
    env: map(parts.env),
    vars: map(parts.vars),
    funcs: map(parts.funcs),
    aliases: map(parts.aliases),
  } as ShellChange;
}

Deno.test("an agent's guarded changes are its own; its plain variables and cwd are shared", () => {
  const v = views();
  v.merge(
    "agent:a",
    change({
      env: { PATH: "/evil:/usr/bin", NOTE: "hi", HOME: null },
      vars: { PS4: 'declare -- PS4="\\$(evil)"' },
      funcs: { ls: "ls () \n{ \n    evil\n}", greet: null },
      aliases: { cat: "alias cat='evil'" },
    }, "/"),
  );
  const human = v.view(HUMAN);
  assert.deepEqual(Object.fromEntries(human.env), {
    PATH: "/usr/bin",
    HOME: "/h",
    XDG_CONFIG_HOME: "/h/.config",
    NOTE: "hi",
  });
  assert.deepEqual([...human.vars.keys(), ...human.aliases.keys()], []);
  assert.deepEqual([...human.funcs.keys()], ["greet"]);
  assert.equal(human.cwd, "/");
  assert.deepEqual(Object.fromEntries(v.view("agent:b").env), Object.fromEntries(human.env));
  const agent = v.view("agent:a");
  assert.equal(agent.env.get("PATH"), "/evil:/usr/bin");
  assert.equal(agent.env.has("HOME"), false);
  assert.deepEqual([...agent.funcs.keys()], ["ls"]);
  assert.deepEqual([...agent.vars.keys(), ...agent.aliases.keys()], ["PS4", "cat"]);
  assert.deepEqual(v.changedEnv("agent:a"), ["HOME", "NOTE", "PATH"]);
  assert.deepEqual(v.changedEnv(HUMAN), ["NOTE"]);
});

Deno.test("the human's changes reach every principal, except where an agent changed that name for itself", () => {
  const v = views();
  v.merge("agent:a", change({ env: { PATH: "/a" } }));
  v.merge(HUMAN, change({ env: { PATH: "/venv:/usr/bin", CURL_HOME: "/c" } }));
  assert.equal(v.view("agent:a").env.get("PATH"), "/a");
  assert.equal(v.view("agent:a").env.get("CURL_HOME"), "/c");
  assert.equal(v.view("agent:b").env.get("PATH"), "/venv:/usr/bin");
  assert.deepEqual(v.changedEnv("agent:b"), ["CURL_HOME", "PATH"]);
  // Set back to the start value: no longer changed.
  v.merge(HUMAN, change({ env: { PATH: "/usr/bin", CURL_HOME: null } }));
  assert.deepEqual(v.changedEnv(HUMAN), []);
});

Deno.test("P-SBX-7 an agent's namerefs and integer variables are its own; once plain again, or removed, they are shared", () => {
  const v = views();
  v.merge(
    "agent:a",
    change({
      vars: {
        ref: 'declare -n ref="a[\\$(evil)]"',
        n: 'declare -ai n=([0]="1")',
        plain: 'declare -- plain="1"',
      },
    }),
  );
  assert.deepEqual([...v.view(HUMAN).vars.keys()], ["plain"]);
  assert.deepEqual([...v.view("agent:a").vars.keys()].sort(), ["n", "plain", "ref"]);
  v.merge("agent:a", change({ vars: { ref: 'declare -- ref="x"', n: null } }));
  assert.deepEqual(Object.fromEntries(v.view(HUMAN).vars), {
    plain: 'declare -- plain="1"',
    ref: 'declare -- ref="x"',
  });
  assert.deepEqual(
    Object.fromEntries(v.view("agent:a").vars),
    Object.fromEntries(v.view(HUMAN).vars),
  );
});

Deno.test("an agent's export too large to start a program with stays its own: one value over 128 KiB, or what would bring the shared environment past 1 MiB", () => {
  const v = views();
  const kb = (n: number) => "a".repeat(n * 1024);
  const many = Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`M${i}`, kb(100)]));
  v.merge("agent:a", change({ env: { BIG: kb(200), ...many } }));
  const human = v.view(HUMAN).env;
  assert.equal(human.has("BIG"), false);
  const shared = [...human.keys()].filter((name) => name.startsWith("M"));
  assert.deepEqual(shared, Array.from({ length: 10 }, (_, i) => `M${i}`));
  assert.equal(v.view("agent:a").env.get("M11"), kb(100));
  assert.equal(v.view("agent:a").env.get("BIG"), kb(200));
  // a smaller value replacing a shared one is shared
  v.merge("agent:a", change({ env: { M0: "small" } }));
  assert.equal(v.view(HUMAN).env.get("M0"), "small");
});

Deno.test("an agent's shell variables that would bring the shared ones past 1 MiB stay its own: every exec restores them", () => {
  const v = views();
  const mb = (n: number) => "v".repeat(n * 1024 * 1024);
  v.merge(
    "agent:a",
    change({ vars: { HUGE: `declare -- HUGE="${mb(5)}"`, SMALL: 'declare -- SMALL="1"' } }),
  );
  assert.equal(v.view(HUMAN).vars.has("HUGE"), false);
  assert.equal(v.view(HUMAN).vars.get("SMALL"), 'declare -- SMALL="1"');
  assert.equal(v.view("agent:a").vars.get("HUGE"), `declare -- HUGE="${mb(5)}"`);
});
