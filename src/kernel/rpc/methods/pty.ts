import { ErrorCode, RpcError, tokenRejected } from "../../../protocol/errors.ts";
import { attached, type MethodSpec } from "../method.ts";
import {
  ptyCloseParams,
  ptyListParams,
  ptyOpenParams,
  ptyReadParams,
  ptyResizeParams,
  ptySendParams,
} from "../../pty/params.ts";
import { analyze, denial } from "../../plans/analysis.ts";
import { programLine } from "../../policy/program_line.ts";
import { reportedMember, reportEffects } from "../../policy/effect_report.ts";
import type { PtyScope } from "../../pty/registry.ts";
import type { Attachment } from "../../session/attachment.ts";
import { sandboxTmpdir } from "../../sandbox/sandbox_tmpdir.ts";
import { refuseRemovedCwd } from "../../session/removed_cwd.ts";

/**
 * The PTYs an attachment reaches: all of its session's for the session's local human, only its
 * own for any other principal (P-SBX-7, K-PTY-7).
 */
function scopeOf(attachment: Attachment): PtyScope {
  const { session, principal } = attachment;
  return { session: session.name, principal: principal === session.shell.owner ? null : principal };
}

/** `pty.*` (K-PTY-1..7), scoped to the attached session and, but for its human, principal. */
export const PTY_METHODS: MethodSpec[] = [
  attached("pty.open", ptyOpenParams, async (ctx, p) => {
    const { kernel, attachment } = ctx;
    // The whole program line is judged like an exec of it, not only its argv0 (issue 14).
    const analysis = await analyze(attachment, programLine(p.cmd, p.args, p.env), false);
    const judgedBy = attachment.grants;
    if (kernel.refreshGrants(attachment) !== judgedBy) {
      // the policy changed while the line was analysed (off the event loop): judged by it (M-ONB-1)
      analysis.verdict = attachment.grants.verdict(analysis.effects, analysis.reversibility);
    }
    const { verdict, effects, reversibility } = analysis;
    if (verdict === "deny") throw denial(attachment, analysis, `policy denies spawning ${p.cmd}`);
    if (verdict === "approval_required") {
      throw new RpcError(ErrorCode.APPROVAL_REQUIRED, `spawning ${p.cmd} needs approval`, {
        verdict,
        ...reportEffects(effects),
        ...reportedMember(
          "needs_approval",
          attachment.grants.approvalReasons(effects, reversibility),
        ),
      });
    }
    kernel.checkTmp();
    refuseRemovedCwd(attachment);
    const state = attachment.session.shell.view(attachment.principal);
    const sandbox = attachment.grants.sandboxFor(state.cwd);
    const env = new Map(state.env);
    if (sandbox !== null) sandboxTmpdir(env, sandbox.view);
    // its placeholders (P-SBX-6) are not made under a run writing there, as a resident's
    if (sandbox !== null) await kernel.residents.afterWriters(attachment.session.name, sandbox);
    // Read before a revoke, perhaps long before (its analysis, the writers it waited for): a
    // program starts only while its token is valid (T-TOK-4).
    if (kernel.attachmentLapsed(attachment)) {
      throw tokenRejected();
    }
    // the proxy socket is held until the PTY's program (its sandbox) exits
    const lease = sandbox?.net ? kernel.net.endpoint(attachment.session.name, sandbox.net) : null;
    let entry;
    try {
      entry = await kernel.ptys.open(attachment.session.name, attachment.principal, {
        cmd: p.cmd,
        args: p.args,
        cwd: state.cwd,
        env: { ...Object.fromEntries(env), ...p.env },
        cols: p.cols,
        rows: p.rows,
        sandbox,
        proxy: lease?.dir ?? null,
        nsenter: kernel.config.sandbox.host.tier === "B"
          ? kernel.config.sandbox.host.nsenter
          : undefined,
        scratch: kernel.cas.tmpDir,
      });
    } catch (e) {
      lease?.release();
      throw e;
    }
    if (lease !== null) {
      entry.pty.onEvent((state) => {
        if (state.exit !== null) lease.release();
      });
      if (entry.pty.exit !== null) lease.release();
    }
    if (sandbox !== null && entry.pty.exit === null) {
      // its program may write where a later sandbox would make a placeholder (P-SBX-6)
      const ended = Promise.withResolvers<void>();
      entry.pty.onEvent((state) => {
        if (state.exit !== null) ended.resolve();
      });
      if (entry.pty.exit !== null) ended.resolve();
      kernel.residents.writing(sandbox.view, ended.promise);
    }
    const { pty } = entry;
    return { pty_id: entry.id, pid: pty.pid, cols: pty.cols, rows: pty.rows, cmd: pty.cmd };
  }),
  attached(
    "pty.send",
    ptySendParams,
    ({ kernel, attachment }, p) => kernel.ptys.send(scopeOf(attachment), p.pty_id, p.input),
  ),
  attached(
    "pty.read",
    ptyReadParams,
    ({ kernel, attachment }, p) => kernel.ptys.read(scopeOf(attachment), p.pty_id),
  ),
  attached(
    "pty.resize",
    ptyResizeParams,
    ({ kernel, attachment }, p) =>
      kernel.ptys.resize(scopeOf(attachment), p.pty_id, p.cols, p.rows),
  ),
  attached(
    "pty.close",
    ptyCloseParams,
    ({ kernel, attachment }, p) => kernel.ptys.close(scopeOf(attachment), p.pty_id),
  ),
  attached("pty.list", ptyListParams, ({ kernel, attachment }) => ({
    ptys: kernel.ptys.list(scopeOf(attachment)),
  })),
];
