import assert from "node:assert/strict";
import type { Effect } from "../../../src/kernel/policy/effects.ts";
import { parseBash } from "../../../src/kernel/bash/ast.ts";
import { deriveEffects } from "../../../src/kernel/policy/effects.ts";
import {
  approvalReasons,
  canSelfApprove,
  effectVerdict,
  envReadGranted,
  isApprover,
  missingGrants,
  opaqueVerdict,
  pathGlobMatches,
  planVerdict,
  wantsBinHash,
} from "../../../src/kernel/policy/evaluate.ts";
import {
  defaultPolicy,
  localHumanPolicy,
  type Policy,
  type PolicyEntry,
  policyFor,
  type PrincipalPolicy,
} from "../../../src/kernel/policy/leash.ts";
import { principalPolicy } from "../../_support/principals.ts";

const HOME = "/home/me";

const reviewer = principalPolicy({
  fs_read: ["~/src/proj/**", "/usr/**"],
  fs_write: ["~/src/proj/**"],
  net_connect: ["github.com:443", "*.githubusercontent.com:443"],
  proc_spawn: ["ls", "cat", "git", "cp"],
  env_read: ["HOME", "PATH"],
  session_write: true,
  time: true,
  auto_apply: "in-grant",
  opaque: "ask",
});

function plan(p: PrincipalPolicy | null, src: string, cwd = "/home/me/src/proj"): string {
  const { effects, reversibility } = deriveEffects(parseBash(src), src, {
    cwd,
    env: { HOME },
    changedEnv: new Set(),
    home: HOME,
    sessionCommands: new Set(),
  });
  return planVerdict(p, effects, reversibility, HOME);
}

Deno.test("P-EVAL-1: path globs: *, **, ?, classes, ~/ and literal glob paths", () => {
  const cases: [string, string, boolean][] = [
    ["/w/*", "/w/a", true],
    ["/w/*", "/w/a/b", false],
    ["/w/**", "/w/a/b", true],
    ["/w/**", "/w", true],
    ["/w/**/x", "/w/x", true],
    ["/w/**/x", "/w/a/b/x", true],
    ["/w/**", "/wx", false],
    ["/w/?.txt", "/w/a.txt", true],
    ["/w/?.txt", "/w/ab.txt", false],
    ["/w/[ab].txt", "/w/b.txt", true],
    ["/w/[!ab].txt", "/w/b.txt", false],
    ["/w/[a-c]*", "/w/cat", true],
    ["~/src/**", "/home/me/src/x", true],
    ["~/src/**", "/root/src/x", false],
    ["/**", "/etc/passwd", true],
    ["/w/*", "/w/*.log", true],
    ["/w/a.log", "/w/*.log", false],
    ["/w/a.b", "/w/aXb", false],
  ];
  for (const [glob, path, expected] of cases) {
    assert.equal(pathGlobMatches(glob, path, HOME), expected, `${glob} vs ${path}`);
  }
  assert.equal(pathGlobMatches("~/x", "/home/me/x", undefined), false);
});

Deno.test("P-EVAL-1: per-effect verdicts", () => {
  const v = (effect: Effect) => effectVerdict(reviewer, effect, HOME);
  assert.equal(v({ kind: "fs_read", paths: ["/home/me/src/proj/a", "/usr/lib/x"] }), "allow");
  assert.equal(v({ kind: "fs_read", paths: ["/home/me/src/proj/a", "/etc/x"] }), "deny");
  assert.equal(v({ kind: "fs_delete", paths: ["/home/me/src/proj/a"] }), "deny");
  assert.equal(v({ kind: "proc_spawn", argv0: "ls", bin_hash: null }), "allow");
  assert.equal(v({ kind: "proc_spawn", argv0: "/usr/bin/git", bin_hash: null }), "allow");
  assert.equal(v({ kind: "proc_spawn", argv0: "rm", bin_hash: null }), "deny");
  assert.equal(v({ kind: "net_connect", host: "github.com", port: 443 }), "allow");
  assert.equal(v({ kind: "net_connect", host: "raw.githubusercontent.com", port: 443 }), "allow");
  assert.equal(v({ kind: "net_connect", host: "github.com", port: 80 }), "deny");
  assert.equal(v({ kind: "net_connect", host: "evil.com", port: 443 }), "deny");
  assert.equal(v({ kind: "net_listen", port: 8080 }), "deny");
  assert.equal(v({ kind: "env_read", names: ["HOME"] }), "allow");
  assert.equal(v({ kind: "env_read", names: ["HOME", "SECRET"] }), "deny");
  assert.equal(v({ kind: "env_read", names: ["*"] }), "deny");
  assert.equal(v({ kind: "env_write", names: ["A"] }), "deny");
  assert.equal(v({ kind: "session_write" }), "allow");
  assert.equal(v({ kind: "journal_read" }), "deny");
  assert.equal(v({ kind: "opaque", reason: "x" }), "approval_required");
  const hashed = principalPolicy({
    proc_spawn: ["sha256:abc"],
    net_listen: ["8080"],
    net_connect: ["*:*"],
  });
  assert.equal(
    effectVerdict(hashed, { kind: "proc_spawn", argv0: "x", bin_hash: "sha256:abc" }, HOME),
    "allow",
  );
  assert.equal(
    effectVerdict(hashed, { kind: "proc_spawn", argv0: "x", bin_hash: null }, HOME),
    "deny",
  );
  assert.equal(effectVerdict(hashed, { kind: "net_listen", port: 8080 }, HOME), "allow");
  assert.equal(effectVerdict(hashed, { kind: "net_connect", host: "a.b", port: 1 }, HOME), "allow");
});

Deno.test("P-EVAL-2: allow, approval_required and deny plans", () => {
  assert.equal(plan(reviewer, "cat README.md"), "allow");
  assert.equal(plan(reviewer, "cp report.csv archive/"), "allow");
  assert.equal(plan(reviewer, "rm scratch.txt"), "deny");
  assert.equal(plan(reviewer, "cat /etc/shadow"), "deny");
  assert.equal(plan(reviewer, "eval x"), "approval_required");
  assert.equal(plan(reviewer, "eval x; rm y"), "deny");
});

Deno.test("P-EVAL-2: auto_apply never, in-grant and reversible", () => {
  const never = { ...reviewer, auto_apply: "never" as const };
  const reversible = { ...reviewer, auto_apply: "reversible" as const };
  assert.equal(plan(never, "cat README.md"), "approval_required");
  assert.equal(plan(never, "true"), "approval_required");
  assert.equal(plan(reviewer, "true"), "allow");
  assert.equal(plan(reversible, "cat README.md"), "allow");
  assert.equal(plan(reversible, "cp a b"), "approval_required");
  assert.equal(plan({ ...reversible, opaque: "allow" }, "eval x"), "approval_required");
});

Deno.test("P-EVAL-1: opaque deny / ask / allow", () => {
  assert.equal(plan({ ...reviewer, opaque: "deny" }, "bash -c x"), "deny");
  assert.equal(
    plan({ ...reviewer, opaque: "ask", proc_spawn: ["*"] }, "bash -c x"),
    "approval_required",
  );
  assert.equal(plan({ ...reviewer, opaque: "allow", proc_spawn: ["*"] }, "bash -c x"), "allow");
  assert.equal(opaqueVerdict(principalPolicy({ opaque: "ask" })), "approval_required");
  assert.equal(opaqueVerdict(null), "deny");
});

Deno.test("P-PRIN-1: an unknown principal is denied everything", () => {
  assert.equal(plan(null, "true"), "deny");
  assert.equal(plan(policyFor(defaultPolicy(), "agent:nobody", "uid:1000"), "ls"), "deny");
  assert.equal(envReadGranted(null, []), false);
  assert.equal(canSelfApprove(null, []), false);
});

Deno.test("P-EVAL-3: the built-in local human may do anything in-grant", () => {
  const human = localHumanPolicy();
  for (const src of ["rm -rf /tmp/x", "curl https://a.example", "bash -c x", "export A=1; cd /"]) {
    assert.equal(plan(human, src), "allow", src);
  }
});

Deno.test("K-APPR-1, K-CAP-1: approvers and self-approval", () => {
  const entry = (approver: boolean | null): PolicyEntry => ({ ...principalPolicy(), approver });
  const policy: Policy = {
    principals: new Map([
      ["agent:boss", entry(true)],
      ["agent:worker", entry(null)],
      ["uid:1000", entry(null)],
    ]),
  };
  assert.equal(isApprover(policy, "agent:boss", "uid:1000"), true);
  assert.equal(isApprover(policy, "agent:worker", "uid:1000"), false);
  assert.equal(isApprover(policy, "uid:1000", "uid:1000"), true);
  assert.equal(isApprover(policy, "agent:ghost", "uid:1000"), false);
  assert.equal(isApprover(defaultPolicy(), "uid:1000", "uid:1000"), true);
  const writer = principalPolicy({ self_approve: ["fs_write", "proc_spawn"] });
  assert.equal(canSelfApprove(writer, ["fs_write"]), true);
  assert.equal(canSelfApprove(writer, ["fs_write", "fs_delete"]), false);
  assert.equal(canSelfApprove(writer, []), true);
  assert.equal(
    canSelfApprove(principalPolicy({ self_approve: ["*"] }), ["opaque", "fs_delete"]),
    true,
  );
});

Deno.test("K-SESS-1, K-EFF-3: env read grants and bin_hash demand", () => {
  assert.equal(envReadGranted(reviewer, ["HOME"]), true);
  assert.equal(envReadGranted(reviewer, ["HOME", "TOKEN"]), false);
  assert.equal(envReadGranted(principalPolicy({ env_read: ["*"] }), ["ANY"]), true);
  assert.equal(wantsBinHash(reviewer), false);
  assert.equal(wantsBinHash(principalPolicy({ proc_spawn: ["ls", "sha256:ab"] })), true);
  assert.equal(wantsBinHash(null), false);
});

Deno.test("M-ONB-3: a denial names the grant each denied effect lacks, and nothing for granted ones", () => {
  const p = principalPolicy({ fs_write: ["/p/**"], proc_spawn: ["*"] });
  const effects: Effect[] = [
    { kind: "proc_spawn", argv0: "curl", bin_hash: null },
    { kind: "net_connect", host: "example.com", port: 443 },
    { kind: "fs_write", paths: ["/p/ok", "/etc/x"] },
    { kind: "env_read", names: ["TOKEN"] },
    { kind: "time" },
  ];
  assert.deepEqual(missingGrants(p, effects, HOME), [
    `net_connect "example.com:443"`,
    `fs.write "/etc/x"`,
    `env_read ["TOKEN"]`,
    "time true",
  ]);
  assert.deepEqual(missingGrants(p, effects.slice(0, 1), HOME), []);
});

Deno.test("M-ELICIT-2: approval names each protected path and opaque effect that needs it, else the auto_apply rule, and nothing when none is needed", () => {
  const p = principalPolicy({
    fs_write: ["/p/**"],
    proc_spawn: ["*"],
    opaque: "ask",
    auto_apply: "in-grant",
  });
  const effects: Effect[] = [
    { kind: "proc_spawn", argv0: "touch", bin_hash: null },
    { kind: "fs_write", paths: ["/p/a", "/p/b/.vscode/tasks.json", "/p/.envrc"] },
    { kind: "opaque", reason: "dynamic argument" },
  ];
  assert.deepEqual(approvalReasons(p, effects, "irreversible", HOME), [
    `fs.write "/p/b/.vscode/tasks.json" is a protected name`,
    `fs.write "/p/.envrc" is a protected name`,
    `opaque "dynamic argument" (the policy says opaque "ask")`,
  ]);
  const plain = effects.slice(0, 1);
  assert.deepEqual(approvalReasons(p, plain, "irreversible", HOME), []);
  assert.deepEqual(approvalReasons({ ...p, auto_apply: "never" }, plain, "reversible", HOME), [
    `every plan (the policy says auto_apply "never")`,
  ]);
  assert.deepEqual(approvalReasons({ ...p, auto_apply: "reversible" }, plain, "unknown", HOME), [
    `reversibility "unknown" (the policy says auto_apply "reversible")`,
  ]);
  // a denied plan needs no approval: it is refused
  const denied = [...effects, { kind: "fs_write", paths: ["/etc/x"] } as Effect];
  assert.deepEqual(approvalReasons(p, denied, "irreversible", HOME), []);
  assert.deepEqual(approvalReasons(null, effects, "irreversible", HOME), []);
});

Deno.test("M-ELICIT-2: a long path's reason keeps its start, the protected name it falls on and its end, short enough for an approval form's line (300 bytes): cut at its end, a path 2,000 bytes down named neither", () => {
  const p = principalPolicy({ fs_write: ["/p/**"], fs_delete: ["/p/**"], auto_apply: "in-grant" });
  const deep = [..."abcdefgh"].map((c) => c.repeat(250)).join("/");
  const reason = (path: string, kind: "fs_write" | "fs_delete" = "fs_write") =>
    approvalReasons(p, [{ kind, paths: [path] }], "irreversible", HOME)[0];
  const bounded = (line: string) => new TextEncoder().encode(line).length <= 298;
  const hook = reason(`/p/${deep}/.git/hooks/pre-commit`);
  assert.match(hook, /^fs\.write "\/p\/aaaa+…\/\.git\/hooks\/pre-commit" is a protected name$/);
  assert.ok(bounded(hook), hook);
  // a protected directory far from the path's end: named, and the end after it
  const tasks = reason(`/p/x/.vscode/${deep}/tasks.json`, "fs_delete");
  assert.match(tasks, /^fs\.delete "\/p\/x\/\.vscode\/…h+\/tasks\.json" is a protected name$/);
  assert.ok(bounded(tasks), tasks);
  // a protected file at the end of a long path; a short path is named whole, as before
  const envrc = reason(`/p/${deep}/.envrc`);
  assert.match(envrc, /^fs\.write "\/p\/aaaa+…\/\.envrc" is a protected name$/);
  assert.ok(bounded(envrc), envrc);
  assert.equal(reason("/p/b/.git/config"), `fs.write "/p/b/.git/config" is a protected name`);
});
