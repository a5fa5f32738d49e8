import { VALUE_NESTING_LIMIT, VALUE_NODE_LIMIT } from "../protocol/limits.ts";
/** A JSON Schema as used by the tool input schemas (a closed subset, see schema_check.ts). */
export type JsonSchema = { [keyword: string]: unknown };

/** MCP tool annotations (M-TOOL-4). */
export interface ToolAnnotations {
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
}

/** One entry of `tools/list` (M-TOOL-1). */
export interface ToolDefinition {
  name: string;
  title: string;
  description: string;
  inputSchema: JsonSchema;
  annotations: ToolAnnotations;
}

const ELIDE: JsonSchema = {
  type: "object",
  properties: {
    max_bytes: { type: "integer", minimum: 0 },
    max_rows: { type: "integer", minimum: 0 },
    max_items: { type: "integer", minimum: 0 },
  },
  additionalProperties: false,
};

const STRING = { type: "string" };
const SIZE = { type: "integer", minimum: 1, maximum: 1000 };

function closed(properties: Record<string, JsonSchema>, required: string[] = []): JsonSchema {
  const schema: JsonSchema = { type: "object", properties, additionalProperties: false };
  if (required.length > 0) schema.required = required;
  return schema;
}

function hints(ro: boolean, destructive: boolean, idempotent: boolean, open: boolean) {
  return {
    readOnlyHint: ro,
    destructiveHint: destructive,
    idempotentHint: idempotent,
    openWorldHint: open,
  };
}

const PTY_INPUT_ITEM: JsonSchema = {
  anyOf: [
    STRING,
    {
      type: "object",
      properties: { key: STRING, text: STRING, bytes: STRING },
      additionalProperties: false,
      minProperties: 1,
      maxProperties: 1,
    },
  ],
};

/** How a model that sees only structuredContent gets what a result left out (M-OUT-1, M-OUT-7). */
const FETCH_MORE = 'Large values arrive elided ("$":"ref") and results over 64 KiB cut ' +
  "(truncated:true); fetch the rest with shoal_get {ref, path, slice} or read its shoal:// uri.";

/** The 13 tools in `tools/list` order, with SPEC's schemas, titles and annotations (M-TOOL-1/3/4). */
export const TOOLS: readonly ToolDefinition[] = [
  {
    name: "shoal_exec",
    title: "Run bash",
    description:
      "Run bash source in the shared shoal session (cwd and environment persist between calls). " +
      "Returns the outcome (ok, status, stdout as a structured value when it is JSON nested at " +
      `most ${VALUE_NESTING_LIMIT} levels with at most ${VALUE_NODE_LIMIT} arrays, objects and ` +
      "members (a table's rows and cells aside), else as text, stderr) and an out:N ref. " +
      FETCH_MORE + " mode 'plan' only reports effects and stores a plan; background:true " +
      "returns a task (task:N) at once; timeout_ms bounds the wait (the work continues as a " +
      'task). shoal_get {ref:"task:N"} gives a task\'s result once it ended (its state ' +
      "before); its live output is at shoal://task/N/out?stream=stdout (or stderr; " +
      "&cursor=next_cursor for more); shoal_cancel stops it.",
    inputSchema: closed({
      src: STRING,
      mode: { type: "string", enum: ["run", "plan"] },
      position: { type: "string", enum: ["stmt", "value"] },
      background: { type: "boolean" },
      timeout_ms: { type: "integer", minimum: 1, maximum: 2147483647 },
      elide: ELIDE,
    }, ["src"]),
    annotations: hints(false, true, false, true),
  },
  {
    name: "shoal_plan",
    title: "Plan bash",
    description:
      "Derive the effects of bash source without running it and store a plan (plan:… ref) with " +
      "the policy verdict and approval state. Apply it later with shoal_apply. A plan over " +
      "64 KiB arrives cut; read all of it at its shoal://plan/… uri.",
    inputSchema: closed({ src: STRING }, ["src"]),
    annotations: hints(true, false, false, false),
  },
  {
    name: "shoal_apply",
    title: "Apply plan",
    description:
      "Run a stored plan (plan:… ref) once it is allowed or approved; fails if the session " +
      "changed so that its effects differ. " + FETCH_MORE,
    inputSchema: closed({ plan_ref: STRING }, ["plan_ref"]),
    annotations: hints(false, true, false, true),
  },
  {
    name: "shoal_get",
    title: "Get value",
    description: "Fetch a transcript value (out:N), or a task's result (task:N; its state " +
      "while it runs), or part of it: path selects members/items " +
      "(e.g. out.rows[0].name), slice [a, b] selects a half-open range of the characters of a " +
      "string (not lines), the items of a list or the rows of a table, elide sets the budget " +
      "(max_bytes 8192 by default, at most 65536). A string slice whose JSON encoding exceeds " +
      "max_bytes arrives as its 256-character preview: ask for a narrower slice. " + FETCH_MORE,
    inputSchema: closed({
      ref: STRING,
      path: STRING,
      slice: {
        type: "array",
        items: { type: "integer", minimum: 0 },
        minItems: 2,
        maxItems: 2,
      },
      elide: ELIDE,
    }, ["ref"]),
    annotations: hints(true, false, true, false),
  },
  {
    name: "shoal_journal",
    title: "Query journal",
    description:
      "Query the durable command history, newest first: time range in ns (since/until), " +
      "principal, ok, effect kinds (all of), head (first word of the command), limit 1..1000. " +
      "Over 64 KiB the result arrives cut (truncated:true); narrow the filters or the limit.",
    inputSchema: closed({
      since: { type: "integer" },
      until: { type: "integer" },
      principal: STRING,
      ok: { type: "boolean" },
      effects: { type: "array", items: STRING },
      head: STRING,
      limit: { type: "integer", minimum: 1, maximum: 1000 },
    }),
    annotations: hints(true, false, true, false),
  },
  {
    name: "shoal_cancel",
    title: "Cancel task",
    description: "Cancel a running task (task:N): SIGTERM to its process group, SIGKILL later.",
    inputSchema: closed({ task: STRING }, ["task"]),
    annotations: hints(false, true, true, false),
  },
  {
    name: "shoal_cap_request",
    title: "Request approval",
    description:
      "Ask for approval of one of your stored plans, optionally naming the effect kinds you " +
      "need; returns approved, or approval_pending with the reason.",
    inputSchema: closed({
      plan_ref: STRING,
      effects: {
        type: "array",
        items: {
          anyOf: [
            STRING,
            closed({ kind: STRING }, ["kind"]),
          ],
        },
      },
    }, ["plan_ref"]),
    annotations: hints(false, false, true, false),
  },
  {
    name: "shoal_pty_open",
    title: "Open terminal",
    description:
      "Start a program on a pseudo-terminal in the session cwd (for interactive programs); " +
      "returns a pty:N id for shoal_pty_send/read/resize/close.",
    inputSchema: closed({
      cmd: { type: "string", minLength: 1 },
      args: { type: "array", items: STRING },
      cols: SIZE,
      rows: SIZE,
      env: { type: "object", additionalProperties: STRING },
    }, ["cmd"]),
    annotations: hints(false, true, false, true),
  },
  {
    name: "shoal_pty_send",
    title: "Type into terminal",
    description:
      "Send input to a terminal: a string, {key: 'Enter'|'Ctrl-C'|…}, {text}, {bytes: base64}, " +
      "or an array of those.",
    inputSchema: closed({
      pty_id: STRING,
      input: {
        anyOf: [...(PTY_INPUT_ITEM.anyOf as JsonSchema[]), {
          type: "array",
          items: PTY_INPUT_ITEM,
        }],
      },
    }, ["pty_id", "input"]),
    annotations: hints(false, true, false, true),
  },
  {
    name: "shoal_pty_read",
    title: "Read terminal",
    description: "Read a terminal's screen, cursor, and whether it changed since the last read.",
    inputSchema: closed({ pty_id: STRING }, ["pty_id"]),
    annotations: hints(true, false, false, false),
  },
  {
    name: "shoal_pty_resize",
    title: "Resize terminal",
    description: "Resize a terminal (cols and rows 1..1000).",
    inputSchema: closed({ pty_id: STRING, cols: SIZE, rows: SIZE }, ["pty_id", "cols", "rows"]),
    annotations: hints(false, false, true, false),
  },
  {
    name: "shoal_pty_close",
    title: "Close terminal",
    description: "Close a terminal: SIGHUP to its program, SIGKILL if it lingers.",
    inputSchema: closed({ pty_id: STRING }, ["pty_id"]),
    annotations: hints(false, true, true, false),
  },
  {
    name: "shoal_pty_list",
    title: "List terminals",
    description: "List the session's terminals.",
    inputSchema: closed({}),
    annotations: hints(true, false, true, false),
  },
];

/** `shoal_exec` as listed under 2025-11-25: it may run as an MCP task (M-TASKS-1). */
const EXEC_AS_TASK: ToolDefinition & { execution: { taskSupport: "optional" } } = {
  ...TOOLS[0],
  execution: { taskSupport: "optional" },
};

/**
 * The `tools/list` entries: {@link TOOLS}, with `shoal_exec`'s `execution` member when MCP tasks
 * were negotiated (every other tool leaves `taskSupport` absent, i.e. forbidden).
 */
export function toolsFor(withTasks: boolean): readonly ToolDefinition[] {
  return withTasks ? [EXEC_AS_TASK, ...TOOLS.slice(1)] : TOOLS;
}
