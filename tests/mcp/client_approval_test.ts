// M-ELICIT-2: the approval form's text. The command and the paths in it are the agent's words;
// nothing in them may pass for the form's own lines, nor push the effects out of sight.
import assert from "node:assert/strict";
import { approvalRequest } from "../../src/mcp/client_approval.ts";

const PROJ = "/home/me/proj";

Deno.test("M-ELICIT-2 a command shaped like the form (fake effects, fake plan, padding) cannot stand in for the kernel's effects, which come first", () => {
  const src = [
    "git log --oneline -3 # summarise recent work",
    ": <<'NOTE'",
    "",
    "Effects:",
    `- fs_read ${PROJ}`,
    "",
    "Reversibility: reversible",
    "Plan: plan:00000000000000000000000000000000",
    "NOTE",
    ...Array(1500).fill(""),
    "echo '{}' > .vscode/tasks.json",
  ].join("\n");
  const message = String(
    approvalRequest({
      src,
      effects: [
        { kind: "fs_write", paths: [`${PROJ}/.vscode/tasks.json`] },
        { kind: "proc_spawn", argv0: "git", bin_hash: null },
      ],
      reversibility: "irreversible",
      plan_ref: "plan:8d44bdd903cabe727d65a42405c553b4",
    }).message,
  );
  const lines = message.split("\n");
  assert.deepEqual(lines.slice(0, 8), [
    "The agent's command needs your approval (shoal).",
    "",
    "Effects:",
    `- fs_write ${PROJ}/.vscode/tasks.json`,
    "- proc_spawn argv0=git",
    "",
    "Reversibility: irreversible",
    "Plan: plan:8d44bdd903cabe727d65a42405c553b4",
  ]);
  // Each heading appears once, unquoted: the command's copies are quoted lines.
  for (const heading of ["Effects:", "Command:"]) {
    assert.equal(lines.filter((l) => l === heading).length, 1, heading);
  }
  assert.equal(lines.filter((l) => l.startsWith("Reversibility:")).length, 1);
  assert.equal(lines.filter((l) => l.startsWith("Plan:")).length, 1);
  const command = lines.slice(lines.indexOf("Command:") + 1);
  assert.ok(command.every((l) => l === "│" || l.startsWith("│ ")), command.join("\n"));
  assert.ok(command.includes("│ Effects:"), "the command's own text is still shown");
  assert.ok(command.includes("│ (1500 empty lines)"), command.join("\n"));
  assert.ok(lines.length < 40, `${lines.length} lines: padding must not push anything away`);
});

Deno.test("M-ELICIT-2 line breaks, bidirectional overrides and zero-width characters in a command or a path are shown as escapes", () => {
  const message = String(
    approvalRequest({
      src: "touch 'a\rEffects: none'\u202e\u200b",
      effects: [{
        kind: "fs_write",
        paths: [`${PROJ}/x\n- nothing else\n\nReversibility: reversible`],
      }],
      reversibility: "irreversible",
      plan_ref: "plan:1",
    }).message,
  );
  assert.match(
    message,
    /^- fs_write \/home\/me\/proj\/x\\u\{a\}- nothing else\\u\{a\}\\u\{a\}Reversibility: reversible$/m,
  );
  assert.match(message, /^│ touch 'a\\u\{d\}Effects: none'\\u\{202e\}\\u\{200b\}$/m);
  assert.equal(message.match(/^Reversibility:/gm)?.length, 1);
  assert.doesNotMatch(message, /[\r\u202e\u200b]/);
});

Deno.test("M-ELICIT-2 the form leads with why the plan needs approval (the kernel's needs_approval), so the protected path is shown however many paths sort before it", () => {
  const paths = Array.from({ length: 30 }, (_, i) => `${PROJ}/-${i}`);
  const because = `fs.write "${PROJ}/.vscode/tasks.json" is a protected name`;
  const message = String(
    approvalRequest({
      src: "touch ./-{0..29} .vscode/tasks.json",
      effects: [{ kind: "fs_write", paths: [...paths, `${PROJ}/.vscode/tasks.json`].sort() }],
      needs_approval: [because],
      reversibility: "irreversible",
      plan_ref: "plan:1",
    }).message,
  );
  const lines = message.split("\n");
  assert.deepEqual(lines.slice(2, 5), ["Because:", `- ${because}`, ""]);
  // The effect line itself is cut before the protected path: only the reason shows it.
  const effect = lines.find((l) => l.startsWith("- fs_write"))!;
  assert.ok(!effect.includes(".vscode"), effect);
});

Deno.test("M-ELICIT-2 the reasons are listed like effects: escaped, cut per line, at most 20 and the rest counted with needs_approval_more", () => {
  const reasons = Array.from({ length: 25 }, (_, i) => `fs.write "${PROJ}/.envrc-${i}\n- x"`);
  const message = String(
    approvalRequest({
      src: "true",
      effects: [],
      needs_approval: ["x".repeat(1000), ...reasons],
      needs_approval_more: 74,
      reversibility: "reversible",
      plan_ref: "plan:1",
    }).message,
  );
  const lines = message.split("\n");
  const listed = lines.slice(lines.indexOf("Because:") + 1, lines.indexOf("Effects:") - 1);
  assert.equal(listed.length, 21);
  assert.equal(listed[0], `- ${"x".repeat(297)}…`);
  assert.equal(listed[1], `- fs.write "${PROJ}/.envrc-0\\u{a}- x"`);
  assert.equal(listed[20], "- … and 80 more");
  assert.ok(lines.includes("- none"), "no effects");
});
