import { z } from "zod";
import { attached, type MethodSpec } from "../method.ts";
import { encodeChunk } from "../../values/chunk.ts";
import { elideParams } from "../../values/params.ts";
import { transcriptResult } from "../../exec/transcript_result.ts";
import { waitBudget } from "../../exec/run_params.ts";
import { TASK_OUTPUT_DEFAULT_BYTES, TASK_OUTPUT_MAX_BYTES } from "../../../protocol/limits.ts";

const taskId = z.object({ task: z.string() });

const awaitParams = taskId.extend({
  timeout_ms: waitBudget.nullish(),
  elide: elideParams.nullish(),
});

const outputParams = taskId.extend({
  stream: z.enum(["stdout", "stderr"]).default("stdout"),
  // An integer JavaScript holds exactly: 1e21 was echoed as 1e+21, an exponent (W-NUM-1).
  cursor: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).default(0),
  max_bytes: z.number().int().min(1).max(TASK_OUTPUT_MAX_BYTES).default(TASK_OUTPUT_DEFAULT_BYTES),
});

/** `task.*` (K-TASK-1..8), scoped to the attached session. */
export const TASK_METHODS: MethodSpec[] = [
  attached(
    "task.list",
    z.object({}),
    ({ kernel, attachment }) => kernel.tasks.list(attachment.session.name).map((t) => t.record()),
  ),
  attached(
    "task.get",
    taskId,
    ({ kernel, attachment }, p) => kernel.tasks.get(attachment.session.name, p.task).record(),
  ),
  attached("task.await", awaitParams, async ({ kernel, attachment }, p) => {
    const task = kernel.tasks.get(attachment.session.name, p.task);
    const timedOut = await kernel.tasks.wait(task, p.timeout_ms ?? undefined);
    const record = { ...task.record(), timed_out: timedOut };
    if (!task.terminal || task.resultRef === null) return record;
    return {
      ...record,
      result: await transcriptResult(attachment, task.resultRef, p.elide),
    };
  }),
  attached(
    "task.cancel",
    taskId,
    ({ kernel, attachment }, p) =>
      kernel.tasks.cancel(kernel.tasks.get(attachment.session.name, p.task)),
  ),
  attached(
    "task.suspend",
    taskId,
    ({ kernel, attachment }, p) =>
      kernel.tasks.pause(kernel.tasks.get(attachment.session.name, p.task), true),
  ),
  attached(
    "task.resume",
    taskId,
    ({ kernel, attachment }, p) =>
      kernel.tasks.pause(kernel.tasks.get(attachment.session.name, p.task), false),
  ),
  attached("task.output", outputParams, async ({ kernel, attachment }, p) => {
    const task = kernel.tasks.get(attachment.session.name, p.task);
    // Read `terminal` before `total`: once terminal, total is final and eof can be trusted.
    const terminal = task.terminal;
    const stream = task.output[p.stream];
    const total = stream.total;
    const length = Math.max(0, Math.min(p.max_bytes, total - p.cursor));
    const chunk = encodeChunk(
      length > 0 ? await stream.readRange(p.cursor, length) : new Uint8Array(),
    );
    const next = p.cursor + chunk.len;
    return {
      task: task.id,
      stream: p.stream,
      cursor: p.cursor,
      next_cursor: next,
      total,
      eof: terminal && next === total,
      encoding: chunk.encoding,
      data: chunk.data,
    };
  }),
];
