import { setImmediate } from "node:timers";
import { utf8Decoder } from "../../protocol/utf8.ts";
import { ErrorCode, RpcError, type RpcErrorObject, tokenRejected } from "../../protocol/errors.ts";
import { STDERR_QUOTE_LIMIT } from "../../protocol/limits.ts";
import { outUri } from "../../protocol/refs.ts";
import type { Attachment } from "../session/attachment.ts";
import { runBash } from "../shells/run.ts";
import type { Sandboxing } from "../sandbox/command.ts";
import {
  cloneState,
  cwdBytesOf,
  diffState,
  type ShellState,
  spawnDir,
} from "../bash/shell_state.ts";
import type { WarmShell } from "../shells/warm_shell.ts";
import { nowNs } from "../events/now_ns.ts";
import type { JournalOutput } from "../journal/entry.ts";
import type { Effect } from "../policy/effects.ts";
import { withoutProxyEnv } from "../net/proxy_env.ts";
import { sandboxTmpdir } from "../sandbox/sandbox_tmpdir.ts";
import { CaptureSink } from "../store/capture.ts";
import { stateDirFailure } from "../store/state_dir_failure.ts";
import { detached } from "../../protocol/detached.ts";
import type { Cas } from "../store/cas.ts";
import type { Task } from "../tasks/registry.ts";
import { commandText, type OutcomeInput, outcomeValue } from "../values/outcome.ts";
import { outcomeSpill } from "../values/spilled_outcome.ts";
import type { ElideOverride } from "../values/params.ts";
import { outcomeRenders } from "../values/render.ts";
import { isList, listLength, type Outcome, tagOf } from "../values/value.ts";
import type { RunServices } from "./run_services.ts";
import { type TranscriptResult, transcriptResult } from "./transcript_result.ts";

/** How a run's caller wants its answer (K-EXEC-1). */
export interface RunOptions {
  position: "stmt" | "value";
  async: boolean;
  timeoutMs: number | null;
  elide: ElideOverride | null | undefined;
  /** Called once bash has been spawned, or the run ended before it could be (W-RPC-4). */
  started?: () => void;
  /** Who approved the plan this run applies, recorded in its journal row (M-ELICIT-1). */
  approvedBy?: string | null;
  /**
   * The directory the cwd must name for the run, as `ShellState.cwdIdentity`: the one a plan it
   * applies was made in (P-PLAN-2), entered exactly, so a swap after the check leads nowhere else.
   */
  cwdIdentity?: string;
  /**
   * Whether the run's sandbox is its principal's plain one for the session's cwd (no approved plan
   * widened it): the session's next warm shell may be prepared in it without a new view.
   */
  plainSandbox?: boolean;
}

const encoder = new TextEncoder();

/** The -32002 error of a failed outcome in stmt position (K-EXEC-4). */
async function raisedError(
  cas: Cas,
  outcome: Outcome,
  ref: string,
  cancelled: boolean,
  errBlobHash: string | null,
): Promise<RpcErrorObject> {
  let stderr = "";
  if (errBlobHash) {
    const bytes = await cas.readRange(errBlobHash, 0, STDERR_QUOTE_LIMIT);
    stderr = utf8Decoder().decode(bytes);
  }
  const n = ref.slice(4);
  return {
    code: ErrorCode.RAISED,
    message: outcome.signal
      ? `command killed by ${outcome.signal}`
      : `command failed with exit status ${outcome.status}`,
    data: {
      code: cancelled ? "cancelled" : "cmd_failed",
      status: outcome.status,
      signal: outcome.signal,
      stderr,
      ref,
      uri: outUri(n),
    },
  };
}

/** A summary of an outcome for the `session.transcript` channel (§9.2). */
function transcriptSummary(outcome: Outcome): Record<string, unknown> {
  const outType = tagOf(outcome.out);
  const summary: Record<string, unknown> = {
    type: "outcome",
    ok: outcome.ok,
    cmd: outcome.cmd,
    out_type: outType,
  };
  if (isList(outcome.out)) summary.n = listLength(outcome.out);
  else if (outType === "table") summary.n = (outcome.out as { n: number }).n;
  return summary;
}

/**
 * Runs already-approved source in the caller's session: journal row, capture, transcript value,
 * events in the K-EXEC-8 order, and the K-EXEC-3/4/5/6 result shapes.
 */
export async function runSource(
  kernel: RunServices,
  attachment: Attachment,
  src: string,
  effects: Effect[],
  sandbox: Sandboxing | null,
  opts: RunOptions,
): Promise<unknown> {
  // Read before the revoke, perhaps long before it gets here (its turn, its analysis): a run
  // starts only while its token is valid (T-TOK-4).
  if (kernel.attachmentLapsed(attachment)) {
    throw tokenRejected();
  }
  const session = attachment.session;
  const started = performance.now();
  const listed = opts.async || opts.timeoutMs !== null;
  // The snapshot is taken before any await so execs start in request order (W-RPC-4, K-BASH-2).
  const snapshot = cloneState(session.shell.view(attachment.principal));
  if (opts.cwdIdentity !== undefined) snapshot.cwdIdentity = opts.cwdIdentity;
  if (sandbox !== null) sandboxTmpdir(snapshot.env, sandbox.view);
  kernel.checkTmp();
  const warm = kernel.warm.take(session.name, snapshot, sandbox);
  let output;
  try {
    const [stdout, stderr] = await Promise.all([
      CaptureSink.open(kernel.cas),
      CaptureSink.open(kernel.cas),
    ]);
    output = { stdout, stderr };
  } catch (e) {
    await warm?.discard();
    throw e;
  }
  // Quota check, journal row and task registration run without an await in between, so
  // concurrent execs cannot all pass the check before one of them is counted (K-TASK-2), and
  // none is registered after the shutdown's cancelling began (G-SOCK-8).
  try {
    kernel.tasks.ensureOpen();
    if (listed) kernel.tasks.ensureCapacity(session.name);
  } catch (e) {
    await Promise.all([output.stdout.abort(), output.stderr.abort(), warm?.discard()]);
    throw e;
  }
  let entryId;
  try {
    entryId = kernel.journal.start({
      session: session.name,
      principal: attachment.principal,
      ts_ns: nowNs(),
      cwd: cwdBytesOf(snapshot),
      src,
      effects,
      approved_by: opts.approvedBy,
    });
  } catch (e) {
    await Promise.all([output.stdout.abort(), output.stderr.abort(), warm?.discard()]);
    throw stateDirFailure(kernel.cas.stateDir, "the journal row", e);
  }
  // The journal takes writes again: rows of runs that ended while it did not are closed now.
  for (const event of kernel.journal.closeLeft()) kernel.bus.publishStored(event);
  const cmd = commandText(src);
  const task = listed
    ? kernel.tasks.create(session.name, attachment.principal, cmd, output)
    : kernel.tasks.createUnlisted(session.name, attachment.principal, cmd, output);
  const run = { src, snapshot, warm, sandbox };
  const work = finishRun(kernel, attachment, task, run, entryId, output, opts);
  if (opts.async) {
    work.catch((e) => kernel.log(`task ${task.id}: ${e}`));
    // Answered once the task is visible with its pid (K-TASK-1).
    await task.begun;
    return { task: task.id, events: `task.${task.n}`, uri: `shoal://task/${task.n}` };
  }
  if (opts.timeoutMs !== null) {
    if (await kernel.tasks.waitInBudget(task, opts.timeoutMs)) {
      work.catch((e) => kernel.log(`task ${task.id}: ${e}`));
      await task.begun;
      return {
        task: task.id,
        events: `task.${task.n}`,
        uri: `shoal://task/${task.n}`,
        timed_out: true,
      };
    }
  }
  const done = await work;
  if (done.error) throw new RpcError(done.error.code, done.error.message, done.error.data);
  return { ...done.result, elapsed_ms: Math.round(performance.now() - started) };
}

/**
 * Ends a run that could not be recorded: its spools are dropped, its journal row is closed as a
 * failed run when the journal still takes writes (so it holds no unfinished ghost), and its task
 * fails with `error`, which is returned for the caller to throw.
 */
async function failRun(
  kernel: RunServices,
  task: Task,
  entryId: number,
  output: { stdout: CaptureSink; stderr: CaptureSink },
  error: RpcError,
): Promise<RpcError> {
  await Promise.all([output.stdout.abort(), output.stderr.abort()]);
  try {
    kernel.bus.publishStored(
      kernel.journal.finish(entryId, { dur_ns: 0n, status: null, ok: false, outputs: [] }),
    );
  } catch (e) {
    kernel.journal.leaveUnfinished(entryId);
    kernel.log(`journal entry ${entryId} stays unfinished until the journal takes writes: ${e}`);
  }
  kernel.tasks.finish(task, "failed", null, error.toObject());
  return error;
}

/**
 * The real directory of `cwd` on the host (symlinks resolved), or null when there is none. A
 * name that is not UTF-8 cannot be a Deno path, so `realpath` resolves its bytes, and the answer
 * is the longest UTF-8 ancestor of the result.
 */
async function realDir(cwd: { cwdBytes?: Uint8Array; cwd: string }): Promise<string | null> {
  if (cwd.cwdBytes === undefined) {
    try {
      return Deno.realPathSync(cwd.cwd);
    } catch {
      return null;
    }
  }
  try {
    const child = new Deno.Command("xargs", {
      args: ["-0", "realpath", "-e", "-z", "--"],
      stdin: "piped",
      stdout: "piped",
      stderr: "null",
    }).spawn();
    const writer = child.stdin.getWriter();
    await writer.write(new Uint8Array([...cwd.cwdBytes, 0]));
    await writer.close();
    const { code, stdout } = await child.output();
    if (code !== 0 || stdout.length < 2) return null;
    // Resolved, so below its longest UTF-8 ancestor physically too: that ancestor decides.
    const text = new TextDecoder().decode(stdout.subarray(0, -1));
    return text.slice(0, text.lastIndexOf("/", text.indexOf("\ufffd"))) || "/";
  } catch {
    return null;
  }
}

/**
 * Whether a sandboxed run could have ended in `cwd`: its real directory lies where the
 * principal's sandbox sees. A state dump the run forged (its bash can write the dump's FIFO) or
 * a directory swapped for a symlink could name any directory, and the session's cwd is where the
 * human's next exec runs (P-SBX-7). A UTF-8 directory that is gone is left to the merge, which
 * keeps the cwd as it was (K-BASH-5).
 */
async function sandboxCouldBeIn(
  attachment: Attachment,
  cwd: { cwdBytes?: Uint8Array; cwd: string },
): Promise<boolean> {
  const real = await realDir(cwd);
  if (real === null) return cwd.cwdBytes === undefined;
  try {
    return attachment.grants.sandboxFor(real) !== null;
  } catch {
    return false;
  }
}

async function finishRun(
  kernel: RunServices,
  attachment: Attachment,
  task: Task,
  run: { src: string; snapshot: ShellState; warm: WarmShell | null; sandbox: Sandboxing | null },
  entryId: number,
  output: { stdout: CaptureSink; stderr: CaptureSink },
  opts: RunOptions,
): Promise<{ result: TranscriptResult; error: RpcErrorObject | null }> {
  const session = attachment.session;
  const { src, snapshot } = run;
  const net = run.sandbox?.net ?? null;
  // the view this run got, for the session's next shells when it is its principal's plain one
  const computed = opts.plainSandbox
    ? { cwd: spawnDir(snapshot), sandbox: run.sandbox }
    : undefined;
  // refusals of the proxy while this run goes are its own (P-NET-2)
  const refusals = net === null ? null : kernel.net.watch(session.name, attachment.principal);
  const ended = kernel.warm.running(session.name);
  // Cancelled means a cancel was requested before bash ended (K-TASK-1): one that arrives while
  // a job it left holds its pipes (K-BASH-3), or before its exit was seen, stops the job, but
  // bash had exited by itself (Task.cancelledBeforeExit).
  let cancelled = false;
  let exit;
  try {
    exit = await runBash({
      bash: kernel.config.bash,
      bashVariables: kernel.config.bashVariables,
      src,
      state: snapshot,
      scratch: kernel.scratch,
      warm: run.warm,
      stdout: output.stdout,
      stderr: output.stderr,
      sandbox: run.sandbox === null ? null : () => kernel.residents.get(session.name, run.sandbox!),
      onSpawn: (pid, entered) => {
        kernel.tasks.spawned(task, pid, entered);
        opts.started?.();
        // In a burst the session's shells are topped up once this run's answer is on its way
        // (below), two kept ready: a spawn blocks the event loop until bash has exec'd, which
        // while this bash ran held back the notice of its exit. Only a burst with none ready
        // spawns one now, so the next run finds it. After a pause, once the answer of a short run
        // is on its way, or while a long one goes on.
        kernel.warm.prepareDuringRun(attachment, computed);
      },
      onExit: () => cancelled = task.cancelledBeforeExit,
    });
  } catch (e) {
    ended();
    refusals?.();
    opts.started?.();
    // a refusal of its sandbox (P-SBX-6: sandbox_busy) reaches the caller as it is
    const error = e instanceof RpcError
      ? e
      : new RpcError(ErrorCode.INTERNAL_ERROR, `cannot start bash: ${e}`);
    throw await failRun(kernel, task, entryId, output, error);
  }
  ended();
  const netRefused = refusals?.() ?? [];
  // the proxy's variables were this run's only, never the session's (P-NET-1)
  if (net !== null && exit.final) withoutProxyEnv(snapshot.env, exit.final.env, net.port);
  let out, err;
  try {
    [out, err] = await Promise.all([output.stdout.finish(), output.stderr.finish()]);
  } catch (e) {
    const error = stateDirFailure(kernel.cas.stateDir, "the output", e);
    throw await failRun(kernel, task, entryId, output, error);
  }
  const input: OutcomeInput = {
    status: exit.status,
    signal: exit.signal,
    out,
    err,
    dur_ns: Number(exit.durNs),
    pid: exit.pid,
    cmd: src,
    netRefused,
  };
  const outcome = outcomeValue(kernel.cas, input);
  if (exit.final && !cancelled) {
    const change = diffState(snapshot, exit.final);
    if (
      run.sandbox !== null && change.cwd !== null &&
      !(await sandboxCouldBeIn(attachment, change.cwd))
    ) {
      change.cwd = null;
    }
    session.shell.merge(attachment.principal, change);
  }
  const n = session.record(outcome, outcomeSpill(kernel.cas, input, outcome));
  const ref = `out:${n}`;
  const uri = outUri(n);
  let stored, renders;
  try {
    renders = await outcomeRenders(outcome, uri);
    const bounded = encoder.encode(renders.tty);
    const renderHash = kernel.cas.put(bounded);
    const outputs: JournalOutput[] = [{ kind: "stdout", hash: out.blob.hash, len: out.blob.len }];
    if (err.blob.len > 0) outputs.push({ kind: "stderr", hash: err.blob.hash, len: err.blob.len });
    outputs.push({ kind: "render", hash: renderHash, len: bounded.length });
    const transcript = { n, ref, session: session.name, summary: transcriptSummary(outcome) };
    // The finished row, its journal event and the transcript event: one commit.
    stored = kernel.journal.batch(() => [
      kernel.journal.finish(entryId, {
        dur_ns: exit.durNs,
        status: outcome.status,
        ok: outcome.ok,
        outputs,
      }),
      kernel.journal.appendEvent("session.transcript", transcript),
    ]);
  } catch (e) {
    const error = stateDirFailure(kernel.cas.stateDir, "the render and journal row", e);
    throw await failRun(kernel, task, entryId, output, error);
  }
  for (const event of stored) kernel.bus.publishStored(event);
  kernel.bus.publish("render", {
    ref,
    session: session.name,
    render: detached(renders.event),
  });
  const error = outcome.ok || opts.position === "value" ? null : await raisedError(
    kernel.cas,
    outcome,
    ref,
    cancelled,
    err.blob.len > 0 ? err.blob.hash : null,
  );
  kernel.tasks.finish(
    task,
    cancelled ? "cancelled" : outcome.ok ? "completed" : "failed",
    ref,
    error,
  );
  const render = attachment.tty ? renders.tty : renders.plain;
  const result = await transcriptResult(attachment, ref, opts.elide, render);
  // Topped up (or replaced, when the run left them unfit: another cwd) once this run's answer is
  // on its way, in the view the run was given when its cwd is the same and its resident lives:
  // a view from before the run (its `git init` made a .git) must not start a sandbox.
  const lives = run.sandbox === null || kernel.residents.has(session.name, run.sandbox);
  setImmediate(() => kernel.warm.prepare(attachment, lives ? computed : undefined));
  return { result, error };
}
