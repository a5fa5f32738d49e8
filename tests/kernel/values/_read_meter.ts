/** Bytes this process has read through read(2) and friends so far (`rchar` of /proc/self/io). */
export function bytesRead(): number {
  return Number(/rchar: (\d+)/.exec(Deno.readTextFileSync("/proc/self/io"))![1]);
}
