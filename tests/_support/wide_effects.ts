/** Test support: sources whose effect reports are as large as K-EFF-7 lets them be. */
import { RUNNER } from "./principals.ts";

/** An agent that may run anything and touch /tmp, unsandboxed (no bwrap needed), asking as `auto_apply` says. */
export function tmpRunner(autoApply: "in-grant" | "never" = "in-grant") {
  return {
    fs: { read: ["/tmp/**"], write: ["/tmp/**"], delete: ["/tmp/**"] },
    ...RUNNER,
    auto_apply: autoApply,
  };
}

/**
 * A source whose effects K-EFF-7 reports at their largest: 3 kinds of 100 paths under `dir` of
 * 1 KiB of control characters, each 6 bytes as JSON (~1.8 MiB per report).
 */
export function widestSource(dir: string): string {
  const paths = (kind: string) =>
    Array.from({ length: 100 }, (_, i) => `${dir}/${kind}${i}/${"\x01".repeat(1000)}`).join(" ");
  return `cat ${paths("r")}; touch ${paths("w")}; rm ${paths("d")}`;
}
