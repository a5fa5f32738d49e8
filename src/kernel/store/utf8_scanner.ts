/**
 * Incremental UTF-8 validation across chunk boundaries, counting Unicode scalars and `\n` bytes.
 * Rejects overlong forms, surrogates and code points above U+10FFFF (RFC 3629).
 */
export class Utf8Scanner {
  /** Unicode scalars in the complete sequences seen while the input was still valid. */
  scalars = 0;
  /** `\n` bytes seen, valid or not. */
  lines = 0;
  #valid = true;
  #need = 0;
  #pending = 0;
  #lo = 0x80;
  #hi = 0xbf;

  /** Whether no invalid byte has been seen (an unfinished final sequence still counts as valid). */
  get valid(): boolean {
    return this.#valid;
  }

  /** Bytes of an unfinished sequence at the end of the input so far (0–3). */
  get pending(): number {
    return this.#pending;
  }

  /** Whether all input so far is valid UTF-8 made of complete sequences. */
  get complete(): boolean {
    return this.#valid && this.#need === 0;
  }

  /** Feeds the next chunk. */
  push(chunk: Uint8Array): void {
    const n = chunk.length;
    let i = 0;
    if (this.#valid) {
      let need = this.#need, pending = this.#pending, lo = this.#lo, hi = this.#hi;
      let scalars = this.scalars, lines = this.lines;
      let bad = false;
      for (; i < n; i++) {
        const b = chunk[i];
        if (need === 0) {
          if (b < 0x80) {
            scalars++;
            if (b === 0x0a) lines++;
            continue;
          }
          if (b < 0xc2 || b > 0xf4) {
            bad = true;
            break;
          }
          if (b < 0xe0) {
            need = 1;
          } else if (b < 0xf0) {
            need = 2;
            if (b === 0xe0) lo = 0xa0;
            else if (b === 0xed) hi = 0x9f;
          } else {
            need = 3;
            if (b === 0xf0) lo = 0x90;
            else if (b === 0xf4) hi = 0x8f;
          }
          pending = 1;
        } else {
          if (b < lo || b > hi) {
            bad = true;
            break;
          }
          lo = 0x80;
          hi = 0xbf;
          if (--need === 0) {
            scalars++;
            pending = 0;
          } else {
            pending++;
          }
        }
      }
      this.#need = need;
      this.#pending = pending;
      this.#lo = lo;
      this.#hi = hi;
      this.scalars = scalars;
      this.lines = lines;
      if (!bad) return;
      this.#valid = false;
      this.#pending = 0;
    }
    for (let j = chunk.indexOf(0x0a, i); j >= 0; j = chunk.indexOf(0x0a, j + 1)) this.lines++;
  }
}
