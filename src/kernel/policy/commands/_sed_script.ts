/**
 * A scanner for GNU sed scripts that finds the files they read (`r`, `R`) and write (`w`, `W`,
 * `s///w`). Scripts that execute commands (`e`, `s///e`) or that it does not understand give
 * null, so the caller can treat them as opaque.
 */

/** Files a sed script reads and writes; null when it runs commands or cannot be followed. */
export function scanSedScript(script: string): { reads: string[]; writes: string[] } | null {
  const reads: string[] = [];
  const writes: string[] = [];
  let i = 0;
  const n = script.length;
  const restOfLine = (): string => {
    const end = script.indexOf("\n", i);
    const text = script.slice(i, end < 0 ? n : end);
    i = end < 0 ? n : end + 1;
    return text;
  };
  const skipBlank = () => {
    while (i < n && (script[i] === " " || script[i] === "\t")) i++;
  };
  /** Skips a delimited part (`/re/`, the pieces of `s` and `y`); false when unterminated. */
  const delimited = (delim: string): boolean => {
    while (i < n && script[i] !== delim) {
      if (script[i] === "\\") i++;
      if (script[i] === "\n" && delim !== "\n") return false;
      i++;
    }
    if (i >= n) return false;
    i++;
    return true;
  };
  const address = (): boolean => {
    const ch = script[i];
    if (ch === undefined) return true;
    if (/[0-9]/.test(ch)) {
      while (i < n && /[0-9~]/.test(script[i])) i++;
    } else if (ch === "$") {
      i++;
    } else if (ch === "/" || ch === "\\") {
      const delim = ch === "/" ? "/" : script[i + 1];
      i += ch === "/" ? 1 : 2;
      if (delim === undefined || !delimited(delim)) return false;
      while (i < n && /[IM]/.test(script[i])) i++;
    }
    return true;
  };

  while (i < n) {
    while (i < n && /[\s;]/.test(script[i])) i++;
    if (i >= n) break;
    if (!address()) return null;
    skipBlank();
    if (script[i] === ",") {
      i++;
      skipBlank();
      if (script[i] === "+" || script[i] === "~") i++;
      if (!address()) return null;
      skipBlank();
    }
    while (script[i] === "!") {
      i++;
      skipBlank();
    }
    const cmd = script[i++];
    if (cmd === undefined) return null;
    switch (cmd) {
      case "{":
      case "}":
      case "=":
      case "d":
      case "D":
      case "g":
      case "G":
      case "h":
      case "H":
      case "n":
      case "N":
      case "p":
      case "P":
      case "x":
      case "z":
      case "F":
        break;
      case "l":
      case "L":
      case "q":
      case "Q":
        skipBlank();
        while (i < n && /[0-9]/.test(script[i])) i++;
        break;
      case "#":
      case ":":
        restOfLine();
        continue;
      case "b":
      case "t":
      case "T":
      case "v":
        while (i < n && script[i] !== ";" && script[i] !== "\n" && script[i] !== "}") i++;
        break;
      case "a":
      case "i":
      case "c":
        // Text up to the end of the line, with backslash-newline continuing it.
        while (i < n && script[i] !== "\n") {
          if (script[i] === "\\") i++;
          i++;
        }
        continue;
      case "r":
      case "R":
      case "w":
      case "W": {
        skipBlank();
        const file = restOfLine();
        if (file === "") return null;
        (cmd === "r" || cmd === "R" ? reads : writes).push(file);
        continue;
      }
      case "s": {
        const delim = script[i++];
        if (delim === undefined || delim === "\n" || delim === "\\") return null;
        if (!delimited(delim) || !delimited(delim)) return null;
        let file: string | null = null;
        while (file === null && i < n && /[gpiImM0-9ew]/.test(script[i])) {
          const flag = script[i++];
          if (flag === "e") return null;
          if (flag === "w") {
            skipBlank();
            file = restOfLine();
            if (file === "") return null;
            writes.push(file);
          }
        }
        if (file !== null) continue;
        break;
      }
      case "y": {
        const delim = script[i++];
        if (delim === undefined || delim === "\n" || delim === "\\") return null;
        if (!delimited(delim) || !delimited(delim)) return null;
        break;
      }
      default:
        // `e` runs a command; anything else is not understood.
        return null;
    }
    skipBlank();
    if (i < n && !/[;\n}#]/.test(script[i])) return null;
  }
  return { reads, writes };
}
