import assert from "node:assert/strict";
import { RpcError } from "../../src/protocol/errors.ts";
import { SUPPORTED_KEYWORDS } from "../../src/mcp/schema_check.ts";
import { TOOLS } from "../../src/mcp/tool_schemas.ts";
import { checkArguments } from "../../src/mcp/tools.ts";

function keywords(schema: unknown, out: Set<string>): void {
  if (Array.isArray(schema)) schema.forEach((s) => keywords(s, out));
  else if (typeof schema === "object" && schema !== null) {
    for (const [k, v] of Object.entries(schema)) {
      out.add(k);
      if (k === "properties") Object.values(v as object).forEach((s) => keywords(s, out));
      else if (k !== "enum" && k !== "required") keywords(v, out);
    }
  }
}

Deno.test("the checker understands every keyword the tool schemas use", () => {
  const used = new Set<string>();
  for (const tool of TOOLS) keywords(tool.inputSchema, used);
  for (const k of used) assert.ok(SUPPORTED_KEYWORDS.has(k), `keyword ${k}`);
});

function rejects(name: string, args: unknown, detail: RegExp): void {
  assert.throws(() => checkArguments(name, args), (e) => {
    assert.ok(e instanceof RpcError);
    assert.equal(e.code, -32602);
    assert.ok(e.message.startsWith(`invalid arguments for ${name}: `), e.message);
    assert.match(e.message, detail);
    return true;
  });
}

Deno.test("M-TOOL-2: schema violations are -32602 naming the tool and the member", () => {
  rejects("shoal_exec", {}, /missing required property "src"/);
  rejects("shoal_exec", { src: 1 }, /src: expected string/);
  rejects("shoal_exec", { src: "x", extra: true }, /unknown property "extra"/);
  rejects("shoal_exec", { src: "x", mode: "approved" }, /mode: must be one of run, plan/);
  rejects("shoal_exec", { src: "x", timeout_ms: 0 }, /timeout_ms: must be >= 1/);
  rejects("shoal_exec", { src: "x", timeout_ms: 2147483648 }, /timeout_ms/);
  rejects("shoal_exec", { src: "x", timeout_ms: 1.5 }, /timeout_ms: expected integer/);
  rejects("shoal_exec", { src: "x", elide: { max_bytes: -1 } }, /elide.max_bytes/);
  rejects("shoal_exec", { src: "x", elide: { depth: 1 } }, /unknown property "depth"/);
  rejects("shoal_exec", "ls", /expected an object/);
  rejects("shoal_get", { ref: "out:1", slice: [1] }, /slice/);
  rejects("shoal_get", { ref: "out:1", slice: [1, -2] }, /slice\[1\]/);
  rejects("shoal_journal", { limit: 1001 }, /limit/);
  rejects("shoal_pty_open", { cmd: "" }, /cmd/);
  rejects("shoal_pty_open", { cmd: "sh", env: { A: 1 } }, /env.A/);
  rejects("shoal_pty_send", { pty_id: "pty:1", input: { key: "Enter", text: "x" } }, /input/);
  rejects("shoal_pty_send", { pty_id: "pty:1", input: [{}] }, /input/);
  rejects("shoal_cap_request", { plan_ref: "p", effects: [{ kind: "x", y: 1 }] }, /effects\[0\]/);
  rejects("shoal_pty_list", { all: true }, /unknown property "all"/);
});

Deno.test("M-TOOL-2: valid arguments pass, absent arguments are {}", () => {
  assert.deepEqual(checkArguments("shoal_pty_list", undefined), {});
  checkArguments("shoal_exec", {
    src: "ls",
    mode: "run",
    position: "stmt",
    background: false,
    timeout_ms: 2147483647,
    elide: { max_bytes: 0 },
  });
  checkArguments("shoal_pty_send", { pty_id: "pty:3", input: ["print(6 * 7)", { key: "Enter" }] });
  checkArguments("shoal_pty_send", { pty_id: "pty:3", input: { bytes: "AA==" } });
  checkArguments("shoal_cap_request", {
    plan_ref: "plan:1",
    effects: ["fs.write", { kind: "proc_spawn" }],
  });
  checkArguments("shoal_journal", {
    since: 1767225600123456789,
    ok: false,
    effects: ["fs_read"],
    head: "git",
    limit: 20,
  });
});

Deno.test("M-TOOL-2: an unknown tool is -32602 unknown tool: <name>", () => {
  assert.throws(
    () => checkArguments("shoal_nope", {}),
    (e) => e instanceof RpcError && e.code === -32602 && e.message === "unknown tool: shoal_nope",
  );
});
