/** What `work` resolves to, or null when it has not settled after `ms`; no timer is left behind. */
export async function within<T>(work: Promise<T>, ms: number): Promise<T | null> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<null>((resolve) => timer = setTimeout(() => resolve(null), ms));
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}
