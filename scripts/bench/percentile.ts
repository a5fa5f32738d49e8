/** The `p` quantile (0..1) of ascending `sorted` samples (nearest rank, clamped). */
export function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
}
