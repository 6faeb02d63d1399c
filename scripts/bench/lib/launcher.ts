import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { spawn } from 'node:child_process';

/**
 * The Temporal dev server writes its log to the stdout it inherits from this process: the
 * harness runs as a child of a small launcher that files the server's lines (they start
 * with `time=... level=`) into BENCH_SERVER_LOG and passes everything else through.
 * @param script the harness's entry point, run again with BENCH_CHILD=1
 */
export function launch(script: string): void {
  const serverLog = path.join(os.tmpdir(), `webhooks-bench-server-${process.pid}.log`);
  const child = spawn(process.execPath, [script], {
    env: { ...process.env, BENCH_CHILD: '1', BENCH_SERVER_LOG: serverLog },
    stdio: ['inherit', 'pipe', 'pipe'],
  });
  const out = fs.createWriteStream(serverLog, { flags: 'a' });
  for (const [stream, sink] of [
    [child.stdout, process.stdout],
    [child.stderr, process.stderr],
  ] as const) {
    readline.createInterface({ input: stream, crlfDelay: Infinity }).on('line', (line) => {
      if (/^time=\S+ level=|^(CLI|Server:|UI:|Metrics:) |^$/.test(line)) out.write(`${line}\n`);
      else sink.write(`${line}\n`);
    });
  }
  // Ctrl-C reaches both processes (one process group): the harness stops what it started, we wait for it.
  process.on('SIGINT', () => {});
  process.on('SIGTERM', () => child.kill('SIGTERM'));
  child.on('exit', (code, signal) => {
    out.end(() => {
      fs.rmSync(serverLog, { force: true });
      process.exit(code ?? (signal === 'SIGINT' ? 130 : 1));
    });
  });
}
