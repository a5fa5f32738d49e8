/** M-ONB-1/2: granting the `project` profile edits a policy text in place, idempotently. */
import assert from "node:assert/strict";
import { parsePolicyText } from "../../../src/kernel/policy/leash.ts";
import { grantProject, projectEntry } from "../../../src/kernel/policy/project_profile.ts";

const PATH = "/home/me/.config/shoal/leash.jsonc";

const EXISTING = `// my policy: keep this comment
{
  "principal": {
    /* the reviewer reads only */
    "agent:reviewer": {
      "fs.read": ["/src/**"],   // trailing comment
      "proc_spawn": ["git"],
    },
  },
}
`;

Deno.test("M-ONB-2: a new policy file holds exactly the project profile on DIR", () => {
  const { text, change } = grantProject(null, PATH, "agent:cursor", "/p/one");
  assert.match(change!, /^created .*: agent:cursor may work in \/p\/one/);
  const entry = parsePolicyText(text, PATH).principals.get("agent:cursor")!;
  assert.deepEqual(
    [entry.fs_read, entry.fs_write, entry.fs_delete],
    [["/p/one/**"], ["/p/one/**"], ["/p/one/**"]],
  );
  assert.deepEqual(entry.proc_spawn, ["*"]);
  assert.deepEqual([entry.env_read, entry.env_write, entry.net_connect], [["*"], ["*"], []]);
  assert.deepEqual(
    [entry.opaque, entry.auto_apply, entry.session_write, entry.sandbox, entry.approve_in_client],
    ["allow", "in-grant", true, true, true],
  );
  assert.deepEqual([entry.journal_read, entry.approver], [false, null]);
  assert.equal(entry.time, true, "date and other clock reads work as in a terminal");
  assert.deepEqual(JSON.parse(text.replace(/^\/\/.*\n/, "")).principal["agent:cursor"], {
    ...projectEntry("/p/one"),
  });
});

Deno.test("M-ONB-1: an existing policy is edited in place: comments and other entries stay byte for byte", () => {
  const { text, change } = grantProject(EXISTING, PATH, "agent:claude-code", "/p/one");
  assert.match(change!, /^added agent:claude-code to /);
  const member = /^ {4}"agent:claude-code": \{\n[\s\S]*?\n {4}\},\n/m;
  assert.equal(text.replace(member, ""), EXISTING, "only the new member was inserted");
  const policy = parsePolicyText(text, PATH);
  assert.deepEqual(policy.principals.get("agent:reviewer")!.fs_read, ["/src/**"]);
  assert.deepEqual(policy.principals.get("agent:claude-code")!.fs_write, ["/p/one/**"]);
});

Deno.test("M-ONB-1: granting again changes nothing; another DIR adds its globs to the same entry", () => {
  const once = grantProject(EXISTING, PATH, "agent:claude-code", "/p/one").text;
  assert.deepEqual(grantProject(once, PATH, "agent:claude-code", "/p/one"), {
    text: once,
    change: null,
  });
  const twice = grantProject(once, PATH, "agent:claude-code", "/p/two");
  assert.match(twice.change!, /^granted agent:claude-code the project \/p\/two/);
  const entry = parsePolicyText(twice.text, PATH).principals.get("agent:claude-code")!;
  for (const list of [entry.fs_read, entry.fs_write, entry.fs_delete]) {
    assert.deepEqual(list, ["/p/one/**", "/p/two/**"]);
  }
  assert.ok(twice.text.startsWith(once.slice(0, once.indexOf('"agent:claude-code"'))));
});

Deno.test("M-ONB-1: an entry the user wrote keeps its fields and spellings; only missing globs are added", () => {
  const mine = `{"principal": {"agent:vscode": {"fs.read": ["/p/**"], "opaque": "ask"}}}`;
  const { text } = grantProject(mine, PATH, "agent:vscode", "/p");
  const entry = parsePolicyText(text, PATH).principals.get("agent:vscode")!;
  assert.deepEqual([entry.fs_read, entry.fs_write, entry.fs_delete], [
    ["/p/**"],
    ["/p/**"],
    ["/p/**"],
  ]);
  assert.equal(entry.opaque, "ask", "the user's choice stays");
  assert.match(text, /"fs\.read": \[\s*"\/p\/\*\*"\s*\]/, "the flat spelling it had is kept");
});

Deno.test("M-ONB-1: a malformed or invalid policy is a clear error naming the file", () => {
  assert.throws(
    () => grantProject(`{"principal": {`, PATH, "agent:x", "/p"),
    /policy \/home\/me\/\.config\/shoal\/leash\.jsonc: malformed JSONC at offset/,
  );
  assert.throws(
    () => grantProject(`{"principal": {"agent:x": {"bogus": 1}}}`, PATH, "agent:y", "/p"),
    /policy \/home\/me\/.*bogus/,
  );
});

Deno.test("M-ONB-1: globs added to an entry that lacks or has empty fs lists leave every other line as it was (the entry's one-line lists, and whole one-line entries, were reformatted one item per line)", () => {
  const cases = [
    // a one-line entry: only its own line changes
    `{\n  "principal": {\n    // keep\n    "agent:a": {"fs": {"read": ["/a/**"], "write": [], "delete": []}, "spawn": ["ls", "cat"]}\n  }\n}\n`,
    // a nested fs object on several lines, write and delete missing
    `{\n  "principal": {\n    "agent:a": {\n      "fs": {\n        "read": ["/a/**", "/b/**"]\n      },\n      "spawn": ["ls", "cat"]\n    }\n  }\n}\n`,
    // flat spellings, write and delete missing
    `{\n  "principal": {\n    "agent:a": {\n      "fs.read": ["/a/**"],\n      "spawn": ["ls", "cat"]\n    }\n  }\n}\n`,
    // no fs at all
    `{\n  "principal": {\n    "agent:a": {\n      "spawn": ["ls", "cat"]\n    }\n  }\n}\n`,
    // the same with CRLF line ends
    `{\r\n  "principal": {\r\n    "agent:a": {\r\n      "spawn": ["ls", "cat"],\r\n    }\r\n  }\r\n}\r\n`,
  ];
  for (const before of cases) {
    const { text } = grantProject(before, PATH, "agent:a", "/p");
    const entry = parsePolicyText(text, PATH).principals.get("agent:a")!;
    for (const list of [entry.fs_read, entry.fs_write, entry.fs_delete]) {
      assert.ok(list.includes("/p/**"), text);
    }
    assert.deepEqual(entry.proc_spawn, ["ls", "cat"]);
    assert.ok(
      text.includes(`"spawn": ["ls", "cat"]`),
      `a list of the entry was reformatted:\n${text}`,
    );
    assert.ok(!/\[\s*\n/.test(text), `a list was spread over lines:\n${text}`);
    if (before.includes("\r\n")) {
      assert.ok(!/[^\r]\n/.test(text), `line ends mixed:\n${JSON.stringify(text)}`);
    }
    // every line but the entry's own and those of the read list, which gains the glob
    const kept = before.split(/\r?\n/).filter((l) => !/agent:a|"(fs\.)?read"/.test(l));
    for (const line of kept) assert.ok(text.includes(line), `line lost: ${line}\n${text}`);
  }
});
