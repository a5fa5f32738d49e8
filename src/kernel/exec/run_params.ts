import { z } from "zod";
import { WAIT_BUDGET_MAX_MS } from "../../protocol/limits.ts";
import { elideParams } from "../values/params.ts";
import type { RunOptions } from "./run_source.ts";

/** A `timeout_ms` wait budget in ms (K-EXEC-6, K-TASK-3). */
export const waitBudget = z.number().int().min(1).max(WAIT_BUDGET_MAX_MS);

/** The run members `exec` and `plan.apply` share (K-EXEC-1, K-PLAN-3). */
export const runParams = z.object({
  position: z.enum(["stmt", "value"]).nullish().transform((v) => v ?? "stmt"),
  async: z.boolean().nullish(),
  background: z.boolean().nullish(),
  timeout_ms: waitBudget.nullish(),
  elide: elideParams.nullish(),
});

/** Run options from the shared run members; `background` is a synonym of `async`. */
export function runOptions(p: z.output<typeof runParams>): RunOptions {
  return {
    position: p.position,
    async: p.async === true || p.background === true,
    timeoutMs: p.timeout_ms ?? null,
    elide: p.elide,
  };
}
