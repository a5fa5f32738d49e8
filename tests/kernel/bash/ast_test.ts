import assert from "node:assert/strict";
import {
  type BinaryCmd,
  type CallExpr,
  type FuncDecl,
  parseBash,
  type ParseErrorData,
  type Stmt,
  type Word,
} from "../../../src/kernel/bash/ast.ts";
import { RpcError } from "../../../src/protocol/errors.ts";
import { MAX_AST_DEPTH } from "../../../src/protocol/limits.ts";

const encoder = new TextEncoder();

function call(src: string): CallExpr {
  return parseBash(src).stmts[0].cmd as CallExpr;
}

function parseFailure(src: string): RpcError {
  try {
    parseBash(src);
  } catch (error) {
    assert.ok(error instanceof RpcError);
    return error;
  }
  assert.fail(`expected a parse error for ${JSON.stringify(src)}`);
}

/** Every node of the tree, depth first. */
function* nodes(value: unknown): Generator<{ type: string; span: { start: number; end: number } }> {
  if (Array.isArray(value)) {
    for (const item of value) yield* nodes(item);
  } else if (value !== null && typeof value === "object") {
    const node = value as { type?: string; span?: { start: number; end: number } };
    if (typeof node.type === "string" && node.span) yield node as never;
    for (const child of Object.values(value)) yield* nodes(child);
  }
}

Deno.test("K-PARSE-2: root File and the appendix shape of `ls -l`", () => {
  const file = parseBash("ls -l");
  assert.deepEqual(file.span, { start: 0, end: 5 });
  assert.equal(file.type, "File");
  const stmt = file.stmts[0];
  assert.deepEqual(
    { type: stmt.type, span: stmt.span, negated: stmt.negated, background: stmt.background },
    { type: "Stmt", span: { start: 0, end: 5 }, negated: false, background: false },
  );
  assert.deepEqual(stmt.redirs, []);
  const cmd = stmt.cmd as CallExpr;
  assert.equal(cmd.type, "CallExpr");
  assert.deepEqual(cmd.assigns, []);
  assert.deepEqual(cmd.args.map((w) => [w.type, w.span, w.lit]), [
    ["Word", { start: 0, end: 2 }, "ls"],
    ["Word", { start: 3, end: 5 }, "-l"],
  ]);
  assert.equal(cmd.args[0].parts[0].type, "Lit");
});

Deno.test("K-PARSE-2: spans are UTF-8 byte offsets into the source", () => {
  const src = "echo héllo 🐟 | cat";
  const bytes = encoder.encode(src);
  const words = (parseBash(src).stmts[0].cmd as BinaryCmd).x.cmd as CallExpr;
  const text = (w: Word) => new TextDecoder().decode(bytes.subarray(w.span.start, w.span.end));
  assert.deepEqual(words.args.map(text), ["echo", "héllo", "🐟"]);
  assert.deepEqual(words.args[1].span, { start: 5, end: 11 });
  for (const node of nodes(parseBash(src))) {
    assert.ok(node.span.start <= node.span.end && node.span.end <= bytes.length, node.type);
  }
});

Deno.test("K-PARSE-2: a lone surrogate counts as U+FFFD (3 bytes) like TextEncoder", () => {
  const src = "echo \uD800x é";
  const cmd = call(src);
  assert.deepEqual(cmd.args[2].span, { start: 10, end: 12 });
  assert.equal(encoder.encode(src).length, parseBash(src).span.end);
});

Deno.test("K-PARSE-2: lit is null for quoted or expanding words, text otherwise", () => {
  const cmd = call(`echo plain 'sq' "dq" $X a\\ b *.log ~/x {a,b} [ x=1 -- é`);
  assert.deepEqual(cmd.args.map((w) => w.lit), [
    "echo",
    "plain",
    null,
    null,
    null,
    null,
    null,
    null,
    null,
    "[",
    "x=1",
    "--",
    "é",
  ]);
  assert.deepEqual(cmd.args[2].parts.map((p) => p.type), ["SglQuoted"]);
  assert.deepEqual(cmd.args[3].parts.map((p) => p.type), ["DblQuoted"]);
  assert.deepEqual(cmd.args[4].parts.map((p) => p.type), ["ParamExp"]);
});

Deno.test("K-PARSE-2: BinaryCmd op is one of && || | |&", () => {
  const ops: string[] = [];
  for (const node of nodes(parseBash("a && b || c | d |& e"))) {
    if (node.type === "BinaryCmd") ops.push((node as unknown as BinaryCmd).op);
  }
  assert.deepEqual(ops.sort(), ["&&", "|", "|&", "||"]);
  const top = parseBash("a && b").stmts[0].cmd as BinaryCmd;
  assert.equal((top.x.cmd as CallExpr).args[0].lit, "a");
  assert.equal((top.y.cmd as CallExpr).args[0].lit, "b");
});

Deno.test("K-PARSE-2: Stmt negated/background and Redirect op/n/word", () => {
  const file = parseBash("! a >out 2>>err <in &>all 3<>rw 2>&1 <<<hs\nb &");
  const [first, second] = file.stmts;
  assert.equal(first.negated, true);
  assert.equal(second.background, true);
  assert.deepEqual(first.redirs.map((r) => [r.type, r.op, r.n, r.word.lit]), [
    ["Redirect", ">", null, "out"],
    ["Redirect", ">>", "2", "err"],
    ["Redirect", "<", null, "in"],
    ["Redirect", "&>", null, "all"],
    ["Redirect", "<>", "3", "rw"],
    ["Redirect", ">&", "2", "1"],
    ["Redirect", "<<<", null, "hs"],
  ]);
  const heredoc = parseBash("cat <<EOF\nhi $X\nEOF\n").stmts[0].redirs[0];
  assert.equal(heredoc.op, "<<");
  assert.ok(heredoc.hdoc !== null);
});

Deno.test("K-PARSE-2: compound commands keep their pinned types", () => {
  const src = [
    "(a)",
    "{ b; }",
    "if c; then d; elif e; then f; else g; fi",
    "while h; do i; done",
    "until j; do k; done",
    "for x in 1 2; do l; done",
    "for ((n=0; n<2; n++)); do m; done",
    "case $y in a|b) n;; *) o;& esac",
    "fn() { p; }",
    "function q { r; }",
    "[[ -f s && t == u ]]",
    "(( v += 1 ))",
    "declare -x w=1",
    "let z=1",
    "time aa",
  ].join("\n");
  const types = parseBash(src).stmts.map((s: Stmt) => s.cmd?.type);
  assert.deepEqual(types, [
    "Subshell",
    "Block",
    "IfClause",
    "WhileClause",
    "WhileClause",
    "ForClause",
    "ForClause",
    "CaseClause",
    "FuncDecl",
    "FuncDecl",
    "TestClause",
    "ArithmCmd",
    "DeclClause",
    "LetClause",
    "TimeClause",
  ]);
  const fn = parseBash("fn() { p; }").stmts[0].cmd as FuncDecl;
  assert.equal(fn.name, "fn");
  assert.equal(fn.body.type, "Stmt");
  assert.equal(fn.body.cmd?.type, "Block");
  const caseItems = (parseBash("case x in a|b) n;; *) o;& esac").stmts[0].cmd as unknown as {
    items: { op: string; patterns: Word[] }[];
  }).items;
  assert.deepEqual(caseItems.map((i) => [i.op, i.patterns.map((p) => p.lit)]), [
    [";;", ["a", "b"]],
    [";&", [null]],
  ]);
});

Deno.test("K-PARSE-2: expansions carry their operators", () => {
  const cmd = call('echo ${a:-b} $(c) $((1+2)) <(d) @(e|f) "$g"');
  const parts = cmd.args.slice(1).map((w) => w.parts[0] as unknown as Record<string, unknown>);
  assert.deepEqual(parts.map((p) => p.type), [
    "ParamExp",
    "CmdSubst",
    "ArithmExp",
    "ProcSubst",
    "ExtGlob",
    "DblQuoted",
  ]);
  assert.deepEqual((parts[0].exp as { op: string }).op, ":-");
  assert.equal(parts[3].op, "<(");
  assert.equal(parts[4].op, "@(");
  assert.equal((parts[2].x as { op: string }).op, "+");
});

Deno.test("K-PARSE-3: `if true; then echo` is -32001 with span, line, col and hint", () => {
  const error = parseFailure("if true; then echo");
  assert.equal(error.code, -32001);
  assert.match(error.message, /fi/);
  const data = error.data as ParseErrorData;
  assert.deepEqual(data.span, { start: 0, end: 1 });
  assert.equal(data.line, 1);
  assert.equal(data.col, 1);
  assert.equal(typeof data.hint, "string");
});

Deno.test("K-PARSE-3: error position is 1-based line/col on later lines; hint null when complete", () => {
  const data = parseFailure("echo ok\necho é (").data as ParseErrorData;
  assert.equal(data.line, 2);
  assert.equal(data.span.start, encoder.encode("echo ok\necho é ").length);
  assert.equal(data.span.end, data.span.start + 1);
  assert.equal(data.hint, null);
  const eof = parseFailure("echo 'abc").data as ParseErrorData;
  assert.ok(eof.hint !== null);
});

Deno.test("K-PARSE-3: col is the 1-based byte column of span.start, NUL bytes before it counted (`echo \\0\\0\\0 ;;` said col 7 for byte 9)", () => {
  for (const src of ["echo \0\0\0 ;;", "\0)", "a\0b )", "echo ok\n\0\0 é )"]) {
    const data = parseFailure(src).data as ParseErrorData;
    const before = encoder.encode(src).subarray(0, data.span.start);
    const lineStart = before.lastIndexOf(0x0a) + 1;
    assert.equal(data.line, before.filter((b) => b === 0x0a).length + 1, JSON.stringify(src));
    assert.equal(data.col, data.span.start - lineStart + 1, JSON.stringify(src));
  }
});

Deno.test("K-PARSE-3: deep nesting is a bounded -32001, and the parser keeps working", () => {
  for (
    const src of [
      "(".repeat(100000),
      "echo " + "$(".repeat(5000) + "x" + ")".repeat(5000),
      "{ ".repeat(MAX_AST_DEPTH) + "x; " + "}; ".repeat(MAX_AST_DEPTH),
    ]
  ) {
    assert.equal(parseFailure(src).code, -32001);
  }
  assert.equal(parseBash("echo ok").stmts.length, 1);
});

Deno.test("K-PARSE-1: long flat sources parse completely", () => {
  const file = parseBash("echo a; ".repeat(20000));
  assert.equal(file.stmts.length, 20000);
  // A statement's span includes its terminating `;`.
  assert.deepEqual(file.stmts.at(-1)!.span, { start: 8 * 19999, end: 8 * 19999 + 7 });
});

Deno.test("parses in any order, with syntax errors and too-deep sources between, give the same trees", () => {
  const sources = [
    "echo hi",
    "for i in 1 2; do echo $i; done | sort > out.txt",
    'f() { local x=$(date); echo "${x:-none}"; }',
    "cat <<EOF\nbody $HOME\nEOF\n",
    "a=1 b=x cmd --flag 2>&1; arr=( x y )",
  ];
  const first = sources.map((src) => JSON.stringify(parseBash(src)));
  const failures = ["if then", "echo 'open", "(".repeat(MAX_AST_DEPTH + 10)];
  for (const [i, src] of [...sources].reverse().entries()) {
    assert.throws(() => parseBash(failures[i % failures.length]), RpcError);
    assert.equal(JSON.stringify(parseBash(src)), first[sources.length - 1 - i]);
  }
});

Deno.test({
  name:
    'K-PARSE-1/K-EXEC-2 (SPEC decision pending: what does an exec of a source bash runs but mvdan-sh rejects get, -32001 or a run judged opaque?) a function named declare, local or export, an associative subscript with a blank, a here-document delimiter written "\\$X" parse',
  ignore: true,
  fn: () => {
    // bash runs each of these (probe40); mvdan-sh 0.10 answers a syntax error, so K-EXEC-2 refuses
    // them with -32001 before bash sees them
    for (
      const src of [
        "declare() { return 7; }; declare -F",
        "local() { :; }",
        "export() { :; }",
        'declare -A m; m[b c]=1; echo "${m[b c]}"',
        'cat <<-"\\$X"\n\tbody\n\t$X\n',
      ]
    ) parseBash(src);
  },
});

Deno.test({
  name:
    "K-PARSE-1 (SPEC decision pending: must `parse` read a carriage return as bash does, or is mvdan-sh's grammar the contract?) `echo a<CR>b` is one argument `a<CR>b` to bash, as `printf 'echo a\\rb' | bash` shows; mvdan-sh 0.10 reads an unquoted carriage return as a blank and gives two words (`explain` and exec judge such a source opaque since 20830a8, but the AST `parse` returns still has the parser's words)",
  ignore: true,
  fn: () => {
    const args = (parseBash("echo a\rb").stmts[0].cmd as { args: { lit: string | null }[] }).args;
    assert.deepEqual(args.map((w) => w.lit), ["echo", "a\rb"]);
  },
});

Deno.test("issue 33: a parse leaves V8's stack limit at its default: mvdan-sh's runtime set it to Infinity as it loaded, so every error the kernel threw after its first parse recorded its whole stack", () => {
  parseBash("for i in 1 2; do echo $(ls | wc -l); done");
  assert.throws(() => parseBash("echo $(("), RpcError);
  assert.equal(Error.stackTraceLimit, 10);
  const deep = (n: number): string => n === 0 ? new Error("deep").stack! : deep(n - 1);
  assert.ok(deep(50).split("\n").length <= 11);
});
