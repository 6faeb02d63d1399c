// CPU time and resident memory of process groups, read from /proc (Linux only).
import fs from 'node:fs';
import { execFileSync } from 'node:child_process';

function readClockTicks(): number {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100; // on every Linux we know of
  }
}
export const clockTicks = readClockTicks();

export interface Stat {
  pid: number;
  ppid: number;
  comm: string;
  ticks: number;
  startTicks: number;
}

export function readStat(pid: number): Stat | null {
  let text;
  try {
    text = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  const close = text.lastIndexOf(')');
  const comm = text.slice(text.indexOf('(') + 1, close);
  const fields = text.slice(close + 2).split(' ');
  // fields[0] is field 3 (state): utime is field 14, stime 15, starttime 22.
  return {
    pid,
    ppid: Number(fields[1]),
    comm,
    ticks: Number(fields[11]) + Number(fields[12]),
    startTicks: Number(fields[19]),
  };
}

/** Resident set size in KiB (VmRSS), or 0 when the process is gone. */
function readRssKiB(pid: number): number {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const match = /^VmRSS:\s+(\d+)/m.exec(status);
    return match ? Number(match[1]) : 0;
  } catch {
    return 0;
  }
}

export function readCmdline(pid: number): string[] {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
  } catch {
    return [];
  }
}

/** Every process of the machine, as pid -> parent pid. */
export function processTable(): Map<number, Stat> {
  const table = new Map<number, Stat>();
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const stat = readStat(Number(name));
    if (stat) table.set(stat.pid, stat);
  }
  return table;
}

/** `root` and all its descendants. */
export function descendants(root: number, table: Map<number, Stat> = processTable()): number[] {
  const result = [root];
  for (let i = 0; i < result.length; i++) {
    for (const stat of table.values()) if (stat.ppid === result[i]) result.push(stat.pid);
  }
  return result;
}

/** Busy and total CPU ticks of the whole machine (/proc/stat, all cores). */
export function machineTicks(): { busy: number; total: number } {
  const line = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '';
  const values = line.trim().split(/\s+/).slice(1).map(Number);
  const idle = (values[3] ?? 0) + (values[4] ?? 0); // idle + iowait
  const total = values.slice(0, 8).reduce((a, b) => a + b, 0); // guest time is already in user
  return { busy: total - idle, total };
}

/**
 * Samples groups of processes. Each group is a function giving its pids now (they may
 * change: database backends come and go). CPU of a pid counts from when the sampler first
 * saw it, or from its start when it started after the sampler did; peak RSS is the highest
 * sum of the group's VmRSS seen by a sample since the window began.
 */
export class ProcessSampler {
  private readonly groups = new Map<string, () => number[]>();
  private readonly seen = new Map<string, Map<number, { base: number; last: number }>>();
  private readonly peakKiB = new Map<string, number>();
  private readonly startTicks = bootTicksNow();
  private timer: NodeJS.Timeout | undefined = undefined;

  constructor(private readonly intervalMs = 250) {}

  addGroup(name: string, pids: () => number[]): void {
    this.groups.set(name, pids);
    this.seen.set(name, new Map());
    this.peakKiB.set(name, 0);
    this.sampleGroup(name);
  }

  removeGroup(name: string): void {
    this.groups.delete(name);
  }

  start(): void {
    this.timer = setInterval(() => this.sample(), this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  sample(): void {
    for (const name of this.groups.keys()) this.sampleGroup(name);
  }

  private sampleGroup(name: string): void {
    const pids = safePids(this.groups.get(name));
    const seen = this.seen.get(name)!;
    let rss = 0;
    for (const pid of pids) {
      const stat = readStat(pid);
      if (!stat) continue;
      const known = seen.get(pid);
      if (known) known.last = Math.max(known.last, stat.ticks);
      else seen.set(pid, { base: stat.startTicks > this.startTicks ? 0 : stat.ticks, last: stat.ticks });
      rss += readRssKiB(pid);
    }
    if (rss > (this.peakKiB.get(name) ?? 0)) this.peakKiB.set(name, rss);
  }

  /** CPU ms of every group so far (cumulative). */
  cpuMs(): Record<string, number> {
    this.sample();
    const result: Record<string, number> = {};
    for (const [name, seen] of this.seen) {
      let ticks = 0;
      for (const { base, last } of seen.values()) ticks += last - base;
      result[name] = (ticks * 1000) / clockTicks;
    }
    return result;
  }

  /** Starts a measurement window: returns a function that ends it with CPU ms and peak RSS MiB per group. */
  window(): () => Measured {
    const cpuBefore = this.cpuMs();
    const machineBefore = machineTicks();
    for (const name of this.peakKiB.keys()) this.peakKiB.set(name, 0);
    this.sample();
    const started = Date.now();
    return () => {
      const cpuAfter = this.cpuMs();
      const machineAfter = machineTicks();
      const groups: Record<string, { cpuMs: number; peakRssMiB: number }> = {};
      for (const name of this.groups.keys()) {
        groups[name] = {
          cpuMs: Math.round((cpuAfter[name] ?? 0) - (cpuBefore[name] ?? 0)),
          peakRssMiB: Math.round(((this.peakKiB.get(name) ?? 0) / 1024) * 10) / 10,
        };
      }
      const machineBusyMs = ((machineAfter.busy - machineBefore.busy) * 1000) / clockTicks;
      const attributed = Object.values(groups).reduce((sum, g) => sum + g.cpuMs, 0);
      return {
        wallMs: Date.now() - started,
        groups,
        machineBusyMs: Math.round(machineBusyMs),
        /** Busy CPU of the machine that no measured group accounts for: the kernel, and other work on the machine. */
        unattributedMs: Math.round(machineBusyMs - attributed),
      };
    };
  }
}

function safePids(fn: (() => number[]) | undefined): number[] {
  try {
    return fn ? fn() : [];
  } catch {
    return [];
  }
}

/** Ticks since boot now (to compare with a process's start time). */
function bootTicksNow(): number {
  const uptime = Number(fs.readFileSync('/proc/uptime', 'utf8').split(' ')[0]);
  return Math.floor(uptime * clockTicks);
}

/** A measurement window of a ProcessSampler: CPU ms and peak RSS per group, and the machine's busy CPU. */
export interface Measured {
  wallMs: number;
  groups: Record<string, { cpuMs: number; peakRssMiB: number }>;
  machineBusyMs: number;
  /** Busy CPU of the machine that no measured group accounts for: the kernel, and other work on the machine. */
  unattributedMs: number;
}
