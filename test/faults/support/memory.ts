// Resident set size of this process over a scenario: before, after and the peak, sampled
// every few milliseconds (the hostile servers, the sender and, in end-to-end cases, the
// API and the worker all run in the test process).
import { megabytes } from './scenarios';

export interface MemoryFigures {
  beforeMb: number;
  afterMb: number;
  peakMb: number;
  /** peak - before */
  growthMb: number;
}

export interface MemoryWatch {
  stop(): MemoryFigures;
}

export function watchMemory(intervalMs = 5): MemoryWatch {
  const before = process.memoryUsage.rss();
  let peak = before;
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage.rss());
  }, intervalMs);
  return {
    stop() {
      clearInterval(timer);
      const after = process.memoryUsage.rss();
      peak = Math.max(peak, after);
      return { beforeMb: megabytes(before), afterMb: megabytes(after), peakMb: megabytes(peak), growthMb: megabytes(peak - before) };
    },
  };
}
