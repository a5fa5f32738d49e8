import assert from "node:assert/strict";
import {
  defaultPolicy,
  loadPolicyFile,
  loadStartupPolicy,
  localHumanPolicy,
  policyFor,
} from "../../../src/kernel/policy/leash.ts";

const HUMAN = "uid:1000";

async function withPolicy(text: string, fn: (path: string) => void | Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "shoal-leash-" });
  try {
    const path = `${dir}/leash.jsonc`;
    await Deno.writeTextFile(path, text);
    await fn(path);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

function loadFails(text: string, pattern: RegExp): Promise<void> {
  return withPolicy(text, (path) => {
    assert.throws(() => loadPolicyFile(path), (error: Error) => {
      assert.match(error.message, pattern);
      return true;
    });
  });
}

Deno.test("P-POL-1: the SPEC example loads, with comments and trailing commas", async () => {
  const text = `{
    // who may do what
    "principal": {
      "agent:reviewer": {
        "fs": { "read": ["~/src/proj/**", "/usr/**"], "write": ["~/src/proj/**"], "delete": [] },
        "net_connect": ["github.com:443", "*.githubusercontent.com:443"],
        "net_listen": [],
        "proc_spawn": ["ls", "cat", "git", "rg"],
        "env_read": ["HOME", "PATH"], "env_write": [], "secret_use": [],
        "session_write": true, "journal_read": false, "time": true,
        "auto_apply": "in-grant",   // never | in-grant | reversible
        "opaque": "ask",            /* deny | ask | allow */
        "hermetic": false,
        "sandbox": false,           // run outside bwrap
        "approve_in_client": true,  // approvals through the agent's MCP client
        "writable_protected": [".vscode", ".git/hooks"],
        "approver": false,
        "self_approve": ["fs_write"], // trailing comma next
      },
    },
  }`;
  await withPolicy(text, (path) => {
    const policy = loadPolicyFile(path);
    const p = policyFor(policy, "agent:reviewer", HUMAN);
    assert.deepEqual(p, {
      fs_read: ["~/src/proj/**", "/usr/**"],
      fs_write: ["~/src/proj/**"],
      fs_delete: [],
      net_connect: ["github.com:443", "*.githubusercontent.com:443"],
      net_listen: [],
      proc_spawn: ["ls", "cat", "git", "rg"],
      env_read: ["HOME", "PATH"],
      env_write: [],
      secret_use: [],
      session_write: true,
      journal_read: false,
      time: true,
      auto_apply: "in-grant",
      opaque: "ask",
      hermetic: false,
      sandbox: false,
      approve_in_client: true,
      writable_protected: [".vscode", ".git/hooks"],
      approver: false,
      self_approve: ["fs_write"],
    });
  });
});

Deno.test("P-POL-2: flat dotted spellings and aliases", async () => {
  const text = `{"principal": {"a": {
    "fs.read": ["/r/**"], "fs.write": ["/w/**"], "fs.delete": ["/d/**"],
    "env.read": ["A"], "env.write": ["B"], "secret.use": ["S"], "proc.spawn": ["ls"],
    "net": ["h:1"], "net_listen": [8080, "9090"], "self_approve": ["fs.read", "*"]
  }, "b": {"spawn": ["cat"], "secrets": ["T"], "env": {"read": ["C"], "write": ["D"]}},
     "c": {"proc": {"spawn": ["x"]}, "secret": {"use": ["U"]}}}}`;
  await withPolicy(text, (path) => {
    const policy = loadPolicyFile(path);
    const a = policyFor(policy, "a", HUMAN)!;
    assert.deepEqual(a.fs_read, ["/r/**"]);
    assert.deepEqual(a.fs_write, ["/w/**"]);
    assert.deepEqual(a.fs_delete, ["/d/**"]);
    assert.deepEqual([a.env_read, a.env_write, a.secret_use, a.proc_spawn], [
      ["A"],
      ["B"],
      ["S"],
      ["ls"],
    ]);
    assert.deepEqual(a.net_connect, ["h:1"]);
    assert.deepEqual(a.net_listen, ["8080", "9090"]);
    assert.deepEqual(a.self_approve, ["fs_read", "*"]);
    const b = policyFor(policy, "b", HUMAN)!;
    assert.deepEqual([b.proc_spawn, b.secret_use, b.env_read, b.env_write], [
      ["cat"],
      ["T"],
      ["C"],
      ["D"],
    ]);
    const c = policyFor(policy, "c", HUMAN)!;
    assert.deepEqual([c.proc_spawn, c.secret_use], [["x"], ["U"]]);
  });
  await loadFails(
    `{"principal": {"b": {"spawn": ["cat"], "proc": {"spawn": ["x"]}}}}`,
    /principal "b".*"proc_spawn" given twice/,
  );
});

Deno.test("P-POL-2: writable_protected names only protected names (P-SBX-6)", async () => {
  await loadFails(
    `{"principal": {"a": {"writable_protected": ["src"]}}}`,
    /principal "a".*"src" is not a protected name/,
  );
  await loadFails(
    `{"principal": {"a": {"approve_in_client": "yes"}}}`,
    /principal "a".*"approve_in_client" must be a boolean/,
  );
});

Deno.test("P-POL-3: defaults for a listed principal", async () => {
  await withPolicy(`{"principal": {"agent:x": {}}}`, (path) => {
    assert.deepEqual(policyFor(loadPolicyFile(path), "agent:x", HUMAN), {
      fs_read: [],
      fs_write: [],
      fs_delete: [],
      net_connect: [],
      net_listen: [],
      proc_spawn: [],
      env_read: [],
      env_write: [],
      secret_use: [],
      session_write: false,
      journal_read: false,
      time: false,
      auto_apply: "never",
      opaque: "deny",
      hermetic: false,
      sandbox: true,
      approve_in_client: false,
      writable_protected: [],
      approver: false,
      self_approve: [],
    });
  });
});

Deno.test("P-POL-2: fatal load errors name the problem", async () => {
  await loadFails(
    `{"principal": {"a": {"fs.read": ["/x"], "fs": {"read": ["/y"]}}}}`,
    /"fs_read" given twice/,
  );
  await loadFails(
    `{"principal": {"a": {"net": ["h:1"], "net_connect": ["h:2"]}}}`,
    /"net_connect" given twice/,
  );
  await loadFails(
    `{"principal": {"a": {"fs.read": ["/x"], "fs.read": ["/y"]}}}`,
    /duplicate field "fs.read"/,
  );
  await loadFails(`{"principal": {"a": {"fs.exec": []}}}`, /unknown field "fs.exec"/);
  await loadFails(`{"principal": {"a": {"fs": {"exec": []}}}}`, /unknown field "fs.exec"/);
  await loadFails(`{"principals": {}}`, /unknown field "principals"/);
  await loadFails(
    `{"principal": {"a": {"fs.read": "/x"}}}`,
    /"fs.read" must be an array of strings/,
  );
  await loadFails(
    `{"principal": {"a": {"fs.read": [1]}}}`,
    /"fs.read" must be an array of strings/,
  );
  await loadFails(
    `{"principal": {"a": {"session_write": "yes"}}}`,
    /"session_write" must be a boolean/,
  );
  await loadFails(`{"principal": {"a": {"sandbox": "no"}}}`, /"sandbox" must be a boolean/);
  await loadFails(`{"principal": {"a": {"auto_apply": "always"}}}`, /"auto_apply" must be one of/);
  await loadFails(`{"principal": {"a": {"opaque": true}}}`, /"opaque" must be one of/);
  await loadFails(
    `{"principal": {"a": {"self_approve": ["fs.exec"]}}}`,
    /unknown effect kind "fs.exec"/,
  );
  await loadFails(`{"principal": {"a": {"net_connect": ["github.com"]}}}`, /not hostglob:port/);
  await loadFails(`{"principal": {"a": []}}`, /expected an object/);
  await loadFails(`{"principal": {"a": {}}`, /malformed JSONC/);
  await loadFails(``, /malformed JSONC/);
  assert.throws(() => loadPolicyFile("/nonexistent/leash.jsonc"), /cannot read/);
});

Deno.test("P-POL-2: a port outside 0..65535 in net_listen or net_connect is a fatal load error naming it (-1, 70000 and 99999999 loaded silently, grants no port can match)", async () => {
  for (const port of ["-1", "70000", "1.5"]) {
    await loadFails(
      `{"principal": {"a": {"net_listen": [${port}]}}}`,
      /"net_listen": .* is not a port/,
    );
  }
  await loadFails(`{"principal": {"a": {"net_listen": ["99999999"]}}}`, /is not a port/);
  await loadFails(`{"principal": {"a": {"net_connect": ["h:65536"]}}}`, /not hostglob:port/);
  const text = `{"principal": {"a": {"net_listen": [0, 65535, "*"], "net_connect": ["h:65535"]}}}`;
  await withPolicy(text, (path) => {
    const a = policyFor(loadPolicyFile(path), "a", HUMAN)!;
    assert.deepEqual([a.net_listen, a.net_connect], [["0", "65535", "*"], ["h:65535"]]);
  });
});

Deno.test("P-POL-2: names of Object.prototype's members are unknown fields too (constructor, toString and __proto__ were taken silently, as nested objects or spellings)", async () => {
  for (const name of ["constructor", "toString", "__proto__", "hasOwnProperty"]) {
    await loadFails(`{"principal": {"a": {"${name}": {}}}}`, new RegExp(`unknown field "${name}"`));
    await loadFails(
      `{"principal": {"a": {"${name}": true}}}`,
      new RegExp(`unknown field "${name}"`),
    );
    await loadFails(
      `{"principal": {"a": {"fs": {"${name}": []}}}}`,
      new RegExp(`unknown field "fs.${name}"`),
    );
  }
});

Deno.test("P-POL-2: a grant holding a lone surrogate (a JSON escape such as \\udcff) is refused: no path is written so (encoded as UTF-8 it reads U+FFFD, another name)", async () => {
  await loadFails(
    `{"principal": {"a": {"fs.write": ["/tmp/x/\\udcff/**"]}}}`,
    /"fs.write": .* is not valid Unicode/,
  );
  await loadFails(`{"principal": {"a": {"env_read": ["A\\ud800"]}}}`, /is not valid Unicode/);
});

Deno.test("G-STATE-3: a policy nested too deeply for the parser is a load error naming the file (it was a bare RangeError: Maximum call stack size exceeded)", async () => {
  const deep = `${"[".repeat(100000)}${"]".repeat(100000)}`;
  await loadFails(
    `{"principal": {"a": {"fs.read": ${deep}}}}`,
    /leash\.jsonc: .*nested too deeply/,
  );
});

Deno.test("P-EVAL-3: the local human gets the built-in entry unless listed", async () => {
  assert.deepEqual(policyFor(defaultPolicy(), HUMAN, HUMAN), localHumanPolicy());
  assert.equal(policyFor(defaultPolicy(), "agent:x", HUMAN), null);
  await withPolicy(`{"principal": {"agent:x": {"proc_spawn": ["ls"]}}}`, (path) => {
    const policy = loadPolicyFile(path);
    assert.deepEqual(policyFor(policy, HUMAN, HUMAN), localHumanPolicy());
    assert.equal(policyFor(policy, "agent:y", HUMAN), null);
  });
  // A listed local human keeps approver unless it sets approver:false (K-APPR-1).
  await withPolicy(`{"principal": {"uid:1000": {"fs.read": ["/**"]}, "uid:1001": {}}}`, (path) => {
    const policy = loadPolicyFile(path);
    const human = policyFor(policy, HUMAN, HUMAN)!;
    assert.equal(human.approver, true);
    assert.deepEqual(human.fs_write, []);
    assert.equal(policyFor(policy, "uid:1001", HUMAN)!.approver, false);
  });
  await withPolicy(`{"principal": {"uid:1000": {"approver": false}}}`, (path) => {
    assert.equal(policyFor(loadPolicyFile(path), HUMAN, HUMAN)!.approver, false);
  });
});

Deno.test("G-STATE-3: --policy, then XDG_CONFIG_HOME or HOME leash.jsonc, then default", async () => {
  const dir = await Deno.makeTempDir({ prefix: "shoal-leash-" });
  try {
    const body = `{"principal": {"agent:x": {"time": true}}}`;
    await Deno.mkdir(`${dir}/xdg/shoal`, { recursive: true });
    await Deno.writeTextFile(`${dir}/xdg/shoal/leash.jsonc`, body);
    await Deno.mkdir(`${dir}/home/.config/shoal`, { recursive: true });
    await Deno.writeTextFile(`${dir}/home/.config/shoal/leash.jsonc`, "{ broken");
    const fromXdg = loadStartupPolicy(null, { XDG_CONFIG_HOME: `${dir}/xdg`, HOME: `${dir}/home` });
    assert.ok(fromXdg.principals.has("agent:x"));
    assert.throws(
      () => loadStartupPolicy(null, { XDG_CONFIG_HOME: "", HOME: `${dir}/home` }),
      /malformed/,
    );
    assert.equal(loadStartupPolicy(null, { HOME: `${dir}/nowhere` }).principals.size, 0);
    assert.equal(loadStartupPolicy(null, {}).principals.size, 0);
    assert.throws(() => loadStartupPolicy(`${dir}/missing.jsonc`, {}), /cannot read/);
    assert.ok(loadStartupPolicy(`${dir}/xdg/shoal/leash.jsonc`, {}).principals.has("agent:x"));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
