// cgroup v1 `cpu` groups of the bench's own: a CPU quota for the flooding client (a client on
// another machine has cores of its own) and cpu.shares for the API process. They need root
// and the v1 `cpu` controller; without them a run goes on without the group and says so.
import fs from 'node:fs';
import path from 'node:path';
import { log } from './config';
import * as stack from './stack';

const CPU_MOUNT = '/sys/fs/cgroup/cpu';
/** The kernel's default CFS period. */
const PERIOD_US = 100_000;

/** Why the bench cannot make cpu groups here, or null when it can. */
export function cpuGroupsMissing(): string | null {
  if (process.getuid?.() !== 0) return 'not root';
  if (!fs.existsSync(path.join(CPU_MOUNT, 'cpu.cfs_quota_us'))) return `no cgroup v1 cpu controller at ${CPU_MOUNT}`;
  return null;
}

/** The `cpu` group the bench itself runs in (/proc/self/cgroup), where its groups are made: beside the service's processes. */
function ownCpuGroup(): string {
  const line = fs
    .readFileSync('/proc/self/cgroup', 'utf8')
    .split('\n')
    .find((l) => l.split(':')[1]?.split(',').includes('cpu'));
  return path.join(CPU_MOUNT, line?.split(':')[2] ?? '/');
}

/** How often the group's quota held its processes back (cpu.stat). */
export interface Throttling {
  periods: number;
  throttledPeriods: number;
  throttledMs: number;
}

export interface CpuGroup {
  dir: string;
  /** Moves process `pid`, every thread of it, into the group. */
  add(pid: number): void;
  throttling(): Throttling;
  /** Moves what is left in the group back out, then removes it (once; also on Ctrl-C). */
  remove(): Promise<void>;
}

/**
 * Makes the group `name` (a folder beside the bench's own) with a CPU quota of `cores`, or
 * with cpu.shares `shares`. Throws when it cannot (see cpuGroupsMissing).
 */
export function makeCpuGroup(name: string, settings: { cores: number } | { shares: number }): CpuGroup {
  const parent = ownCpuGroup();
  const dir = path.join(parent, `${name}-${process.pid}`);
  fs.mkdirSync(dir);
  const remove = stack.onStop(`cpu group ${dir}`, () => {
    // A thread left in the group keeps it from being removed: back to where the bench runs.
    for (const pid of fs.readFileSync(path.join(dir, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean)) {
      try {
        fs.writeFileSync(path.join(parent, 'cgroup.procs'), pid);
      } catch {
        // gone meanwhile
      }
    }
    fs.rmdirSync(dir);
  });
  try {
    if ('cores' in settings) {
      fs.writeFileSync(path.join(dir, 'cpu.cfs_period_us'), String(PERIOD_US));
      fs.writeFileSync(path.join(dir, 'cpu.cfs_quota_us'), String(Math.round(settings.cores * PERIOD_US)));
    } else fs.writeFileSync(path.join(dir, 'cpu.shares'), String(settings.shares));
  } catch (error) {
    void remove();
    throw error;
  }
  return {
    dir,
    // cgroup.procs, not tasks: `tasks` takes one thread, and Node's helper threads (GC, libuv) would stay outside the quota.
    add: (pid) => fs.writeFileSync(path.join(dir, 'cgroup.procs'), String(pid)),
    throttling() {
      const stat = Object.fromEntries(
        fs
          .readFileSync(path.join(dir, 'cpu.stat'), 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((line) => line.split(' ') as [string, string]),
      );
      return {
        periods: Number(stat.nr_periods ?? 0),
        throttledPeriods: Number(stat.nr_throttled ?? 0),
        throttledMs: Math.round(Number(stat.throttled_time ?? 0) / 1e6),
      };
    },
    remove,
  };
}

/**
 * A group made as makeCpuGroup makes it; or, where this machine cannot have one, none and
 * why (logged): the run goes on without it, and its report says so.
 */
export function tryCpuGroup(
  name: string,
  settings: { cores: number } | { shares: number },
  what: string,
): { group: CpuGroup; missing: null } | { group: null; missing: string } {
  const missing = cpuGroupsMissing();
  if (missing === null) return { group: makeCpuGroup(name, settings), missing };
  log(`WARNING: ${what} not applied (${missing}): going on without it`);
  return { group: null, missing };
}
