/**
 * The figure table every stress scenario prints (issue 13): one row per figure with its bound,
 * the measured value and PASS/FAIL, headed by the machine load (`uptime`) at the start.
 */

/** One measured figure next to its bound. */
export interface Figure {
  figure: string;
  bound: string;
  measured: string;
  pass: boolean;
  /** The load it was measured under (execs, clients, bytes). */
  load: string;
}

/** The figures of one scenario run, printed as they come and summarised at the end. */
export class Report {
  readonly rows: Figure[] = [];

  constructor(readonly scenario: string) {
    console.log(`== ${scenario}  (${loadAverage()})`);
  }

  /** Records and prints one figure. */
  add(figure: string, bound: string, measured: string | number, pass: boolean, load: string) {
    const row = { figure, bound, measured: String(measured), pass, load };
    this.rows.push(row);
    console.log(
      `${pass ? "PASS" : "FAIL"}  ${figure.padEnd(44)} ${row.measured.padStart(14)}  ` +
        `bound ${bound.padEnd(18)} load ${load}`,
    );
  }

  /** Records a figure that could not be measured here (e.g. no tmpfs mount), as a note. */
  skip(figure: string, why: string): void {
    console.log(`SKIP  ${figure}: ${why}`);
  }

  /** Prints the verdict and sets the exit status: 1 when any figure failed. */
  finish(): void {
    const failed = this.rows.filter((r) => !r.pass).length;
    console.log(`== ${this.scenario}: ${failed === 0 ? "PASS" : `FAIL (${failed} figures)`}`);
    if (failed > 0) Deno.exitCode = 1;
  }
}

/** The load averages `uptime` prints, e.g. `load average: 2.04, 1.10, 0.47`. */
export function loadAverage(): string {
  const out = new Deno.Command("uptime", { stdout: "piped", stderr: "null" }).outputSync();
  const text = new TextDecoder().decode(out.stdout);
  return /load averages?:.*$/.exec(text.trim())?.[0] ?? "load unknown";
}

/** A number of bytes in MiB with one decimal. */
export function mib(bytes: number): string {
  return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
}

/** The value of `--NAME N` in `args`, or `fallback`; exits 2 on a non-positive integer. */
export function intFlag(args: string[], name: string, fallback: number): number {
  const i = args.indexOf(`--${name}`);
  if (i === -1) return fallback;
  const n = Number(args[i + 1]);
  if (!Number.isInteger(n) || n <= 0) {
    console.error(`--${name} needs a positive integer`);
    Deno.exit(2);
  }
  return n;
}
