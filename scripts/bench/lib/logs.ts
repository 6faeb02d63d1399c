// Warnings and errors in the logs: the service's (pino JSON levels 40+, the SDK's WARN/ERROR
// lines) and the Temporal dev server's (filed by the launcher into BENCH_SERVER_LOG).
import fs from 'node:fs';

export type LogScan = Record<string, { warnings: number; errors: number; sample: string[] }>;

export interface ServerLogScan {
  warnings: number;
  errors: number;
  byMessage: Record<string, number>;
  sample: string[];
}

/** The text of a log file; empty when it cannot be read. */
export function readLog(file: string): string | null {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return null;
  }
}

export function scanLogs(files: { name: string; file: string }[]): LogScan {
  const result: LogScan = {};
  for (const { name, file } of files) {
    const entry = { warnings: 0, errors: 0, sample: [] as string[] };
    const text = readLog(file) ?? '';
    for (const line of text.split('\n')) {
      let level = 0;
      const json = /^\{.*"level":(\d+)/.exec(line);
      if (json) level = Number(json[1]);
      else if (/\b(ERROR|Error)\b/.test(line)) level = 50;
      else if (/\bWARN\b/.test(line)) level = 40;
      if (level >= 50) entry.errors++;
      else if (level >= 40) entry.warnings++;
      else continue;
      const short = line.replace(/"time":\d+,?/, '').slice(0, 300);
      if (entry.sample.length < 5 && !entry.sample.includes(short)) entry.sample.push(short);
    }
    result[name] = entry;
  }
  return result;
}

/** Warnings and errors the Temporal server logged since `offset`, by message. */
export function scanServerLog(offset: number): ServerLogScan {
  const file = process.env.BENCH_SERVER_LOG;
  const result: ServerLogScan = { warnings: 0, errors: 0, byMessage: {}, sample: [] };
  if (!file || !fs.existsSync(file)) return result;
  const fd = fs.openSync(file, 'r');
  const size = fs.fstatSync(fd).size;
  const buffer = Buffer.alloc(Math.max(0, size - offset));
  fs.readSync(fd, buffer, 0, buffer.length, offset);
  fs.closeSync(fd);
  for (const line of buffer.toString('utf8').split('\n')) {
    const level = /level=(\w+)/.exec(line)?.[1];
    if (level !== 'WARN' && level !== 'ERROR') continue;
    if (level === 'WARN') result.warnings++;
    else result.errors++;
    const msg = /msg="([^"]*)"/.exec(line)?.[1] ?? '?';
    const error = /error="([^"]*)"/.exec(line)?.[1];
    const key = `${level} ${msg}${error ? `: ${error.slice(0, 80)}` : ''}`;
    result.byMessage[key] = (result.byMessage[key] ?? 0) + 1;
    if (result.sample.length < 3) result.sample.push(line.slice(0, 400));
  }
  return result;
}

export function serverLogOffset(): number {
  const file = process.env.BENCH_SERVER_LOG;
  return file && fs.existsSync(file) ? fs.statSync(file).size : 0;
}
