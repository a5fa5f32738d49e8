import process from "node:process";

/** Whether any process (zombies included) still belongs to process group `pgid`. */
export function groupExists(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}
