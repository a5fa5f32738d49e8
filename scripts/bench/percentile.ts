/** The `p` quantile (0..1) of ascending `sorted` samples (nearest rank, clamped). */
export function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
}

/** Prints `title` and each stage's p50 and p95 in ms, sorting every stage's samples in place. */
export function printStages(title: string, stages: Map<string, number[]>): void {
  console.log(title);
  console.log("stage                              p50      p95");
  for (const [name, samples] of stages) {
    samples.sort((a, b) => a - b);
    console.log(
      `${name.padEnd(32)} ${percentile(samples, 0.5).toFixed(3).padStart(7)}  ` +
        `${percentile(samples, 0.95).toFixed(3).padStart(7)}`,
    );
  }
}
