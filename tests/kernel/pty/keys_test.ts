import assert from "node:assert/strict";
import { ErrorCode, RpcError } from "../../../src/protocol/errors.ts";
import { encodePtyInput } from "../../../src/kernel/pty/keys.ts";

const text = (bytes: Uint8Array) => String.fromCharCode(...bytes);
const key = (name: string, appCursor = false) => text(encodePtyInput({ key: name }, appCursor));
const isInvalidParams = (e: unknown) =>
  e instanceof RpcError && e.code === ErrorCode.INVALID_PARAMS;

Deno.test("K-PTY-12 every named key encodes to the table's bytes", () => {
  const table: [string[], string][] = [
    [["Enter", "Return", "CR"], "\r"],
    [["Newline", "LF"], "\n"],
    [["Tab"], "\t"],
    [["BackTab", "Shift-Tab"], "\x1b[Z"],
    [["Escape", "Esc"], "\x1b"],
    [["Backspace", "BS"], "\x7f"],
    [["Delete", "Del"], "\x1b[3~"],
    [["Insert", "Ins"], "\x1b[2~"],
    [["Space"], " "],
    [["Up"], "\x1b[A"],
    [["Down"], "\x1b[B"],
    [["Right"], "\x1b[C"],
    [["Left"], "\x1b[D"],
    [["Home"], "\x1b[H"],
    [["End"], "\x1b[F"],
    [["PageUp", "PgUp"], "\x1b[5~"],
    [["PageDown", "PgDn"], "\x1b[6~"],
    [["F1"], "\x1bOP"],
    [["F2"], "\x1bOQ"],
    [["F3"], "\x1bOR"],
    [["F4"], "\x1bOS"],
    [["F5"], "\x1b[15~"],
    [["F6"], "\x1b[17~"],
    [["F7"], "\x1b[18~"],
    [["F8"], "\x1b[19~"],
    [["F9"], "\x1b[20~"],
    [["F10"], "\x1b[21~"],
    [["F11"], "\x1b[23~"],
    [["F12"], "\x1b[24~"],
    [["Ctrl-Space", "Ctrl-@"], "\x00"],
    [["Ctrl-["], "\x1b"],
    [["Ctrl-\\"], "\x1c"],
    [["Ctrl-]"], "\x1d"],
    [["Ctrl-^"], "\x1e"],
    [["Ctrl-_"], "\x1f"],
    [["Ctrl-?"], "\x7f"],
  ];
  for (const [names, bytes] of table) {
    for (const name of names) {
      assert.equal(key(name), bytes, name);
      assert.equal(key(name.toUpperCase()), bytes, name.toUpperCase());
      assert.equal(key(name.toLowerCase()), bytes, name.toLowerCase());
    }
  }
});

Deno.test("K-PTY-12 Ctrl-letters with every prefix spelling and letter case", () => {
  for (let i = 0; i < 26; i++) {
    const lower = String.fromCharCode(0x61 + i);
    const expected = String.fromCharCode(i + 1);
    for (const prefix of ["Ctrl-", "ctrl-", "C-", "c-", "CTRL-"]) {
      assert.equal(key(prefix + lower), expected);
      assert.equal(key(prefix + lower.toUpperCase()), expected);
    }
  }
});

Deno.test("K-PTY-12 DECCKM: arrows, Home and End use ESC O x; other keys unchanged", () => {
  const app: Record<string, string> = {
    Up: "\x1bOA",
    Down: "\x1bOB",
    Right: "\x1bOC",
    Left: "\x1bOD",
    Home: "\x1bOH",
    End: "\x1bOF",
  };
  for (const [name, bytes] of Object.entries(app)) assert.equal(key(name, true), bytes);
  assert.equal(key("PageUp", true), "\x1b[5~");
  assert.equal(key("F1", true), "\x1bOP");
});

Deno.test("K-PTY-2 strings, text, bytes and nested arrays concatenate in order", () => {
  const out = encodePtyInput(
    ["ls", { key: "Space" }, [{ text: "-l" }, [[{ bytes: btoa("\r") }]]], "é"],
    false,
  );
  assert.deepEqual([...out], [...new TextEncoder().encode("ls -l\ré")]);
  assert.equal(encodePtyInput([], false).length, 0);
  assert.deepEqual([...encodePtyInput({ bytes: "AP8=" }, false)], [0, 255]);
  assert.deepEqual([...encodePtyInput({ bytes: "AP8" }, false)], [0, 255]);
});

Deno.test("K-PTY-2 deep nesting does not overflow the stack", () => {
  let input: unknown = "x";
  for (let i = 0; i < 100_000; i++) input = [input];
  assert.equal(text(encodePtyInput(input, false)), "x");
});

Deno.test("K-PTY-2 malformed input, unknown keys and bad base64 are -32602", () => {
  const bad: unknown[] = [
    undefined,
    null,
    42,
    true,
    {},
    { text: "a", key: "Enter" },
    { text: 1 },
    { key: null },
    { key: "Hyper-X" },
    { key: "Ctrl-1" },
    { key: "F13" },
    { bytes: "not base64!" },
    { bytes: "A" },
    ["ok", { nope: "x" }],
    [["ok"], 7],
  ];
  for (const input of bad) {
    assert.throws(() => encodePtyInput(input, false), isInvalidParams, JSON.stringify(input));
  }
});

Deno.test("K-PTY-2 more than 1 MiB after encoding is -32602; exactly 1 MiB is fine", () => {
  const mib = 1024 * 1024;
  assert.equal(encodePtyInput("a".repeat(mib), false).length, mib);
  assert.throws(() => encodePtyInput("a".repeat(mib + 1), false), isInvalidParams);
  assert.throws(() => encodePtyInput(["a".repeat(mib), { key: "Enter" }], false), isInvalidParams);
  // Multi-byte UTF-8 counts encoded bytes, not characters.
  assert.throws(() => encodePtyInput("é".repeat(mib / 2 + 1), false), isInvalidParams);
  const b64 = btoa("a".repeat(mib + 3));
  assert.throws(() => encodePtyInput({ bytes: b64 }, false), isInvalidParams);
});
