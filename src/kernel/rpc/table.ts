import type { MethodSpec } from "./method.ts";
import { BASH_METHODS } from "./methods/bash.ts";
import { EVENT_METHODS } from "./methods/events.ts";
import { EXEC_METHODS } from "./methods/exec.ts";
import { JOURNAL_METHODS } from "./methods/journal.ts";
import { PLAN_METHODS } from "./methods/plans.ts";
import { PTY_METHODS } from "./methods/pty.ts";
import { SESSION_METHODS } from "./methods/session.ts";
import { TASK_METHODS } from "./methods/tasks.ts";
import { VALUE_METHODS } from "./methods/values.ts";

/** The kernel's one method table (SPEC §3.0), keyed by method name. */
export const METHODS: ReadonlyMap<string, MethodSpec> = new Map(
  [
    ...SESSION_METHODS,
    ...BASH_METHODS,
    ...EXEC_METHODS,
    ...VALUE_METHODS,
    ...JOURNAL_METHODS,
    ...TASK_METHODS,
    ...PLAN_METHODS,
    ...PTY_METHODS,
    ...EVENT_METHODS,
  ].map((m) => [m.name, m]),
);
