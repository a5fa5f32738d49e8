/**
 * A parser for GNU sed scripts (as GNU sed 4.9 reads them) that finds the files they read (`r`,
 * `R`) and write (`w`, `W`, `s///w`). It follows the whole grammar and gives null for anything it
 * does not parse completely, or that executes a command (`e`, `s///e`), so the caller reports
 * `opaque` rather than guess (issue 34).
 */

/** Files a sed script reads and writes; null when it runs commands or is not parsed completely. */
export function scanSedScript(script: string): { reads: string[]; writes: string[] } | null {
  try {
    return new SedScript(script).scan();
  } catch (e) {
    if (e instanceof NotUnderstood) return null;
    throw e;
  }
}

/** Thrown where the script leaves the grammar this parser follows. */
class NotUnderstood extends Error {}

/** Commands that take no argument. */
const PLAIN = new Set("=dDgGhHnNpPxzF");
/** Flags of `s` besides `w` and `e`. */
const S_FLAGS = /[gpiImM0-9]/;

class SedScript {
  readonly reads: string[] = [];
  readonly writes: string[] = [];
  private i = 0;
  /** How many `{` blocks are open. */
  private depth = 0;

  constructor(private readonly text: string) {}

  scan(): { reads: string[]; writes: string[] } {
    while (true) {
      // Commands are separated by newlines and `;`, with blanks anywhere between.
      while (this.at(/[\s;]/)) this.i++;
      if (this.i >= this.text.length) {
        if (this.depth !== 0) this.fail();
        return { reads: this.reads, writes: this.writes };
      }
      this.command();
    }
  }

  /** The character at the cursor; undefined at the end. */
  private ch(): string | undefined {
    return this.text[this.i];
  }

  /** Whether the character at the cursor matches `re` (never at the end). */
  private at(re: RegExp): boolean {
    const ch = this.ch();
    return ch !== undefined && re.test(ch);
  }

  private fail(): never {
    throw new NotUnderstood();
  }

  private blanks(): void {
    while (this.ch() === " " || this.ch() === "\t") this.i++;
  }

  /** The rest of the line (a file name or comment), consuming its newline. */
  private restOfLine(): string {
    const end = this.text.indexOf("\n", this.i);
    const line = this.text.slice(this.i, end < 0 ? undefined : end);
    this.i = end < 0 ? this.text.length : end + 1;
    return line;
  }

  /** After a command: blanks, then its end (`;`, newline, `}`, `#` or the script's end). */
  private end(): void {
    this.blanks();
    if (this.ch() !== undefined && !this.at(/[;\n}#]/)) this.fail();
  }

  /** The body of a delimited part up to an unescaped `delim` (consumed); no newline inside. */
  private delimited(delim: string): void {
    while (this.ch() !== delim) {
      if (this.ch() === undefined || this.ch() === "\n") this.fail();
      if (this.ch() === "\\") {
        this.i++;
        if (this.ch() === undefined || this.ch() === "\n") this.fail();
      }
      this.i++;
    }
    this.i++;
  }

  /**
   * A delimiter of `s`, `y` or `\cREc`: any character but newline and backslash, here only an
   * ASCII one (in the C locale sed takes the first byte of a UTF-8 character as the delimiter).
   */
  private delimiter(): string {
    const delim = this.ch();
    if (delim === undefined || delim === "\n" || delim === "\\" || delim >= "\x80") this.fail();
    this.i++;
    return delim;
  }

  private digits(): boolean {
    const start = this.i;
    while (this.at(/[0-9]/)) this.i++;
    return this.i > start;
  }

  /** One address, if any: `N`, `first~step`, `$`, `/re/` or `\cREc` with `I`/`M` flags. */
  private address(): boolean {
    if (this.digits()) {
      if (this.ch() === "~") {
        this.i++;
        if (!this.digits()) this.fail();
      }
      return true;
    }
    if (this.ch() === "$") {
      this.i++;
      return true;
    }
    if (this.ch() === "/" || this.ch() === "\\") {
      if (this.ch() === "\\") this.i++;
      this.delimited(this.delimiter());
      while (this.ch() === "I" || this.ch() === "M") this.i++;
      return true;
    }
    return false;
  }

  private addresses(): void {
    if (!this.address()) return;
    this.blanks();
    if (this.ch() !== ",") return;
    this.i++;
    this.blanks();
    if (this.ch() === "+" || this.ch() === "~") {
      this.i++;
      if (!this.digits()) this.fail();
    } else if (!this.address()) {
      this.fail();
    }
  }

  /**
   * A label of `:`, `b`, `t`, `T`: GNU ends it at blanks, `;` or `}`, and the next command may
   * follow after blanks alone (`b x w out` writes `out`). A `#` there is not followed.
   */
  private label(): void {
    this.blanks();
    while (this.ch() !== undefined && !this.at(/[\s;}#]/)) this.i++;
    this.blanks();
    if (this.ch() === "#") this.fail();
  }

  /** A file name: the rest of the line after blanks, never empty. */
  private fileName(): string {
    this.blanks();
    const name = this.restOfLine();
    if (name === "") this.fail();
    return name;
  }

  private command(): void {
    this.addresses();
    this.blanks();
    if (this.ch() === "!") {
      this.i++;
      this.blanks();
    }
    const cmd = this.ch();
    if (cmd === undefined) this.fail();
    this.i++;
    if (PLAIN.has(cmd)) return this.end();
    switch (cmd) {
      case "{":
        this.depth++;
        return;
      case "#":
        this.restOfLine();
        return;
      case "}":
        if (this.depth-- === 0) this.fail();
        return this.end();
      case ":":
      case "b":
      case "t":
      case "T":
        return this.label();
      case "v":
        this.blanks();
        while (this.at(/[0-9.]/)) this.i++;
        return this.end();
      case "l":
      case "q":
      case "Q":
        this.blanks();
        this.digits();
        return this.end();
      case "a":
      case "i":
      case "c":
        // Text to the end of the line; a backslash escapes the next character, newline too.
        while (this.ch() !== undefined && this.ch() !== "\n") {
          if (this.ch() === "\\") this.i++;
          this.i++;
        }
        return;
      case "r":
      case "R":
        this.reads.push(this.fileName());
        return;
      case "w":
      case "W":
        this.writes.push(this.fileName());
        return;
      case "s":
        return this.substitute();
      case "y": {
        const delim = this.delimiter();
        this.delimited(delim);
        this.delimited(delim);
        return this.end();
      }
      default:
        // `e` runs a command; anything else is not sed as this parser knows it.
        this.fail();
    }
  }

  /** `s/re/replacement/flags`, flags possibly with blanks between, `w FILE` last. */
  private substitute(): void {
    const delim = this.delimiter();
    this.delimited(delim);
    this.delimited(delim);
    while (true) {
      this.blanks();
      const flag = this.ch();
      if (flag === "w") {
        this.i++;
        this.writes.push(this.fileName());
        return;
      }
      if (flag === undefined || !S_FLAGS.test(flag)) return this.end();
      this.i++;
    }
  }
}
