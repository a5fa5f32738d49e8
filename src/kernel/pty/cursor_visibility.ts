/** Whether a PTY's program hid its cursor (K-PTY-9 `cursor.hidden`). */
import type xterm from "@xterm/headless";

type Terminal = InstanceType<typeof xterm.Terminal>;

/**
 * Mirrors DECTCEM (`CSI ? 25 h/l`, reset by RIS and DECSTR) of `term` into `set`; the emulator
 * has no public getter.
 */
export function trackCursorVisibility(term: Terminal, set: (hidden: boolean) => void): void {
  const parser = term.parser;
  const has25 = (params: (number | number[])[]) => params.some((p) => p === 25);
  parser.registerCsiHandler({ prefix: "?", final: "h" }, (params) => {
    if (has25(params)) set(false);
    return false;
  });
  parser.registerCsiHandler({ prefix: "?", final: "l" }, (params) => {
    if (has25(params)) set(true);
    return false;
  });
  parser.registerCsiHandler({ intermediates: "!", final: "p" }, () => {
    set(false);
    return false;
  });
  parser.registerEscHandler({ final: "c" }, () => {
    set(false);
    return false;
  });
}
