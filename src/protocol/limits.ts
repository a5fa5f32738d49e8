/** Largest frame in bytes, excluding the newline (W-FRAME-2). */
export const FRAME_LIMIT = 16 * 1024 * 1024;
/**
 * Deepest nesting of arrays and objects a frame may hold: a deeper one is refused before it is
 * decoded or parsed (issue 13: parsing builds an array or object of 60-100 bytes per level, so a
 * run of frames 10,000 levels deep grew a process by 20 MiB per 2,000 frames), and no echo of
 * what a frame held can exhaust the stack of `JSON.stringify` with a replacer (about 2,700 levels).
 */
export const NESTING_LIMIT = 2_000;
/**
 * Deepest nesting of a frame from the kernel that a client reads: a reply or event wraps what a
 * request carried (up to NESTING_LIMIT) in a few envelope levels.
 */
export const REPLY_NESTING_LIMIT = NESTING_LIMIT + 16;
/**
 * Deepest nesting of arrays and objects that stdout JSON may hold to become a structured value
 * (K-BASH-10); deeper stdout is text. A typed value's wire form (at most two JSON levels per level)
 * then stays far below the depth at which serializing, rendering or eliding it exhausts the stack.
 */
export const VALUE_NESTING_LIMIT = 512;
/**
 * Most nodes that stdout JSON may hold to become a structured value (K-BASH-10); more is text. The
 * nodes are its arrays, its objects other than a table's rows, their members, and the tables'
 * columns: each is held at up to ~230 bytes, so this keeps one exec's parsed output near 50 MiB,
 * below K-BASH-11's 64 MiB (a 16 MiB `[{},{},…]` held 1 GiB, a row of a million keys 232 MiB).
 */
export const VALUE_NODE_LIMIT = 262_144;
/** Bytes a node is taken to hold: VALUE_NODE_LIMIT of them are the budget of one value. */
export const NODE_BYTES = 230;
/**
 * Bytes a scalar item, cell or member value is taken to hold in that budget (its slot, a float's
 * box); a string {@link STRING_BYTES} and its characters. Scalars uncounted, a 15 MB list of 3
 * million short strings held 103 MiB, one of 8 million zeros 72 MiB (found by probe41).
 */
export const SCALAR_BYTES = 12;
export const STRING_BYTES = 32;
/**
 * Most cells (rows × columns) of a table made from stdout JSON (K-BASH-10); an array of objects
 * past it is a list of records. Rows with keys of their own made every row a column: a 119 KB
 * `[{"k0":1},{"k1":1},…]` filled 100 million cells, ~1 GiB and 6 s of the kernel's event loop.
 */
export const TABLE_CELL_LIMIT = 4_194_304;
/** Deepest nesting of a kernel request id that is echoed (deeper: -32600, its echo could overflow the stack). */
export const ID_NESTING_LIMIT = 100;
/**
 * Bytes of responses and events queued for one kernel connection, or for all of them, past which
 * the kernel reads no more requests of a connection with frames queued until they are written:
 * four frames at the frame limit.
 */
export const WRITE_BACKLOG_LIMIT = 4 * FRAME_LIMIT;
/** Largest chunk a framer is fed at once (W-FRAME-3). */
export const READ_CHUNK = 64 * 1024;
/** Bound on any text handed to a client (V-RENDER-3). */
export const TEXT_LIMIT = 65536;
/** Bound on the JSON text of a tool result's structuredContent (M-OUT-7). */
export const STRUCTURED_LIMIT = 65536;
/** Bound on `render` event payloads (SPEC §9.2). */
export const RENDER_EVENT_LIMIT = 4096;

/** Elision budget members (V-ELIDE-1). */
export interface ElideBudget {
  max_bytes: number;
  max_rows: number;
  max_items: number;
  max_bytes_raw: number;
}

/** Kernel default elision budget (V-ELIDE-1). */
export const ELIDE_DEFAULTS: Readonly<ElideBudget> = Object.freeze({
  max_bytes: 8192,
  max_rows: 100,
  max_items: 500,
  max_bytes_raw: 4096,
});
/** Encoded size no elided value may exceed (V-ELIDE-6). */
export const ELIDE_HARD_CAP = 65536;
/** Budget applied to each preview element (V-ELIDE-5). */
export const PREVIEW_BUDGET: Readonly<ElideBudget> = Object.freeze({
  max_bytes: 1024,
  max_rows: 5,
  max_items: 5,
  max_bytes_raw: 256,
});
/** Preview sizes (V-ELIDE-5). */
export const PREVIEW_ITEMS = 5;
export const PREVIEW_SCALARS = 256;
export const RENDER_HEAD_LINES = 10;
/** Width every render line is cut to (V-RENDER-1). */
export const RENDER_COLUMNS = 80;

/** Quotas (E-2). */
export const MAX_SESSIONS = 64;
export const MAX_TASKS_PER_SESSION = 64;
export const MAX_TERMINAL_TASKS_KEPT = 256;
export const MAX_PTYS_PER_SESSION = 16;
export const MAX_SUBSCRIPTIONS = 64;
export const MAX_USER_CHANNELS = 1024;
/** A reclaimable session is removed after this long idle (E-3). */
export const SESSION_IDLE_MS = 10 * 60 * 1000;
/** Transcript values kept per session (V-REF-1). */
export const MAX_TRANSCRIPT = 1000;
/**
 * Bytes of captured output a session's transcript holds in memory (issue 33); older values whose
 * output the CAS holds are read back from it when asked for.
 */
export const TRANSCRIPT_INLINE_BYTES = 4 << 20;
/** Reclaimed session names whose last `out:N` the kernel remembers by name (V-REF-1). */
export const RECLAIMED_NAMES = 4096;
/** Plans kept per (session, principal) (P-PLAN-3). */
export const MAX_PLANS = 1000;
/** UTF-8 bytes of source (and effects' paths) the plans of one (session, principal) hold in total (E-3). */
export const MAX_PLAN_SOURCE_BYTES = 64 * 1024 * 1024;

/** Event bus sizes (K-EVT-7, K-EVT-9). */
export const EVENT_RING = 1024;
export const SUBSCRIBER_QUEUE = 256;
export const EVENT_PAYLOAD_LIMIT = 65536;

/** Bytes of stderr quoted in a -32002 error (K-EXEC-4). */
export const STDERR_QUOTE_LIMIT = 4096;
/** `task.output` bytes when `max_bytes` is absent, and its largest value (K-TASK-*). */
export const TASK_OUTPUT_DEFAULT_BYTES = 16384;
export const TASK_OUTPUT_MAX_BYTES = 65536;
/** Largest `timeout_ms` wait budget in ms, the largest timer delay (K-EXEC-6). */
export const WAIT_BUDGET_MAX_MS = 2147483647;

/** Grace periods in ms (K-BASH-13, K-PTY-5, K-BASH-3). */
export const KILL_GRACE_MS = 2000;
export const PTY_KILL_GRACE_MS = 500;
export const PIPE_LINGER_MS = 500;
/** A session's warm shells (issue 10) idle this long (ms) are killed; the next run starts cold. */
export const WARM_IDLE_MS = 60_000;

/** Capture cap per stream per exec (K-BASH-12). */
export const CAPTURE_CAP = 4 * 1024 * 1024 * 1024;
/** Stdout at most this large is tried as JSON (K-BASH-10). */
export const JSON_PARSE_LIMIT = 16 * 1024 * 1024;
/** Largest encoded `pty.send` input in bytes (K-PTY-2). */
export const PTY_INPUT_LIMIT = 1024 * 1024;
/** PTY columns and rows are clamped to 1..this (K-PTY-1, K-PTY-4). */
export const PTY_MAX_DIMENSION = 1000;
/** Default PTY columns (K-PTY-1). */
export const PTY_DEFAULT_COLS = 80;
/** Default PTY rows (K-PTY-1). */
export const PTY_DEFAULT_ROWS = 24;
/** Shortest gap in ms between `pty.N` grid-change events: at most 20 per second (K-PTY-13). */
export const PTY_EVENT_INTERVAL_MS = 50;
/** `journal.query` limit when absent or 0 (K-JQ-1). */
export const JOURNAL_QUERY_DEFAULT_LIMIT = 100;
/** Largest `journal.query` limit (K-JQ-1). */
export const JOURNAL_QUERY_MAX_LIMIT = 1000;
/** Slack in ns on time filters above 2^53, for clients that rounded ts through doubles (W-NUM-1). */
export const NS_FILTER_SLACK = 1000;
/** `events.read` limit when absent (K-EVT-1). */
export const EVENTS_READ_DEFAULT_LIMIT = 1024;
/** Largest `events.read` limit (K-EVT-1). */
export const EVENTS_READ_MAX_LIMIT = 10000;
/** Deepest AST nesting `parse` accepts; deeper source is a `-32001` error (K-PARSE-3). */
export const MAX_AST_DEPTH = 1000;
/** Most candidates `complete` returns (K-COMP-1). */
export const MAX_COMPLETIONS = 200;
/** Work budget of one effect derivation; beyond it the result gains `opaque` (K-EFF-3). */
export const EFFECT_ANALYSIS_STEPS = 200000;
/** Largest str/bytes value the kernel holds in memory; larger ones stay CAS-backed (K-BASH-11). */
export const INLINE_VALUE_LIMIT = 65536;
/** Largest chunk of `value.get` raw and `blob.get`, and their default size (K-VAL-4, K-BLOB-1). */
export const RAW_CHUNK_LIMIT = 65536;
/** Scalars of an outcome's `cmd` kept before it is cut with `…` (K-BASH-9). */
export const OUTCOME_CMD_SCALARS = 256;
/** Most requests `approval.list` returns (K-APPR-4). */
export const APPROVAL_LIST_LIMIT = 200;
/** Bytes of a plan's `src` shown per `approval.list` item (K-APPR-4). */
export const APPROVAL_SRC_LIMIT = 65536;
/** Scalars of a journal row's `head` (J-2). */
export const JOURNAL_HEAD_SCALARS = 256;
/** UTF-8 bytes of `src` shown per `journal.query` row before it is cut with `…` (K-JQ-4). */
export const JOURNAL_SRC_BYTES = 16384;
/**
 * Effects per reported effect list, and entries per reported `paths` or `names` list; the rest are
 * counted in `effects_more`, `paths_more`, `names_more` (K-EFF-7, K-JQ-4).
 */
export const EFFECT_REPORT_ITEMS = 100;
/** UTF-8 bytes of a reported effect string (`argv0`, `reason`, `host`, a path), `…` included (K-EFF-7). */
export const EFFECT_STRING_BYTES = 1024;
/** Sources longer than this many UTF-16 code units are parsed off the event loop (E-4). */
export const INLINE_PARSE_LIMIT = 8192;
/**
 * Sources of more words and operators than this are parsed and analysed off the event loop too
 * (E-4): an 8 KB `a;a;…` of 4,096 commands held the event loop for 2-3 s. A script of 40 lines
 * holds about 1,000.
 */
export const INLINE_PARSE_UNITS = 2048;
/**
 * Distinct command names an analysis on the event loop looks up along PATH; past them the source
 * is analysed off the loop (E-4): each costs 0.1-0.5 ms (a stat per PATH directory, a thrown
 * error per miss), and 512 names in 2.4 KB held the loop 190 ms.
 */
export const INLINE_LOOKUPS = 64;
/**
 * Sources longer than this many UTF-16 code units are analysed by a worker of their own (E-4): at
 * most ~64 K words, well under a second of parsing, queue in the ordinary worker.
 */
export const LARGE_PARSE_SOURCE = 64 * 1024;
/** Heap in bytes past which the analysis worker is replaced after its job, freeing its memory (E-4). */
export const WORKER_HEAP_LIMIT = 64 * 1024 * 1024;
/**
 * Most words and operators a parsed source may hold (`bash/parse_budget.ts`); more is a `-32001`
 * error. The parser needs up to about 1 KiB of heap for each.
 */
export const MAX_PARSE_UNITS = 1_200_000;
/** Length of one wait slice of the facade's task-backed execution and its progress (M-PROG-1). */
export const SLICE_MS = 1000;
