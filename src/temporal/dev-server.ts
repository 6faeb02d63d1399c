import { execFile, spawn } from 'node:child_process';
import { access, constants } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { SEARCH_ATTRIBUTE_KEYS } from '../contract/search-attributes';

const run = promisify(execFile);
type Env = Record<string, string | undefined>;

/** Later tags carry a `replace` directive in go.mod, which `go install pkg@version` rejects. */
export const TEMPORAL_CLI_PACKAGE = 'github.com/temporalio/cli/cmd/temporal@v1.5.1';

export class PrerequisiteError extends Error {
  override readonly name = 'PrerequisiteError';
}

async function isExecutable(file: string): Promise<boolean> {
  return access(file, constants.X_OK).then(
    () => true,
    () => false,
  );
}

async function goBinDir(env: Env): Promise<string | null> {
  try {
    const { stdout } = await run('go', ['env', 'GOPATH'], { env });
    return path.join(stdout.trim().split(path.delimiter)[0], 'bin');
  } catch {
    return null; // no Go on this machine
  }
}

/**
 * The Temporal CLI binary: TEMPORAL_CLI_PATH, else `temporal` on PATH, else
 * $(go env GOPATH)/bin/temporal, else built there with `go install` (minutes, once).
 */
export async function findTemporalCli(env: Env = process.env, log = console.log): Promise<string> {
  const explicit = env.TEMPORAL_CLI_PATH;
  if (explicit) {
    if (await isExecutable(explicit)) return explicit;
    throw new PrerequisiteError(`TEMPORAL_CLI_PATH=${explicit} is not an executable file`);
  }
  for (const dir of (env.PATH ?? '').split(path.delimiter).filter(Boolean)) {
    const candidate = path.join(dir, 'temporal');
    if (await isExecutable(candidate)) return candidate;
  }
  const goBin = await goBinDir(env);
  if (goBin === null) {
    throw new PrerequisiteError(
      'The Temporal CLI was not found and Go is not installed: install Go (https://go.dev/dl) or the Temporal CLI, ' +
        'or set TEMPORAL_CLI_PATH, or point TEMPORAL_ADDRESS at a running Temporal server',
    );
  }
  const built = path.join(goBin, 'temporal');
  if (await isExecutable(built)) return built;
  log(`Building the Temporal CLI with 'go install ${TEMPORAL_CLI_PACKAGE}' (a few minutes, first time only)...`);
  await new Promise<void>((resolve, reject) => {
    const child = spawn('go', ['install', TEMPORAL_CLI_PACKAGE], { env, stdio: ['ignore', 'inherit', 'inherit'] });
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0 ? resolve() : reject(new PrerequisiteError(`'go install ${TEMPORAL_CLI_PACKAGE}' failed (exit ${code})`)),
    );
  });
  return built;
}

export interface DevServerOptions {
  cliPath: string;
  namespace: string;
  /** Omitted: a free port. */
  port?: number;
  /** Omitted: no Web UI. */
  uiPort?: number;
  /** Omitted: in memory. */
  dbFilename?: string;
}

/**
 * Runs the Temporal CLI dev server with our search attributes registered. SQLite in WAL
 * mode without fsync is what the Temporal SDK's own CI uses: a crash of the process loses
 * nothing, only a crash of the machine could.
 */
export async function startDevServer(options: DevServerOptions): Promise<TestWorkflowEnvironment> {
  // Loaded here, not at the top: @temporalio/testing is a dev dependency, absent from a
  // production install, which never starts a dev server.
  const { TestWorkflowEnvironment } = await import('@temporalio/testing');
  return TestWorkflowEnvironment.createLocal({
    server: {
      executable: { type: 'existing-path', path: options.cliPath },
      namespace: options.namespace,
      ip: '127.0.0.1',
      port: options.port,
      ui: options.uiPort !== undefined,
      uiPort: options.uiPort,
      dbFilename: options.dbFilename,
      searchAttributes: SEARCH_ATTRIBUTE_KEYS,
      extraArgs: [
        '--sqlite-pragma',
        'journal_mode=WAL',
        '--sqlite-pragma',
        'synchronous=OFF',
        '--dynamic-config-value',
        'system.enableActivityEagerExecution=true',
        '--dynamic-config-value',
        'matching.numTaskqueueReadPartitions=1',
        '--dynamic-config-value',
        'matching.numTaskqueueWritePartitions=1',
        // The transfer queue hands out the next workflow task after an activity: read it at once.
        '--dynamic-config-value',
        'history.transferProcessorMaxPollRPS=1000',
        // The visibility queue (the Web UI's list) is read at most 5 times a second: fewer reads
        // of its task table, and a write's workflow that has closed by the time its start record
        // is read gets only its close record. The list lags by at most 200 ms.
        '--dynamic-config-value',
        'history.visibilityProcessorMaxPollRPS=5',
        // The dev server otherwise reads its search attributes anew from SQLite each time it
        // checks or records one (every workflow here carries one), so that attributes added
        // while it runs apply at once. Ours are all registered as it starts.
        '--dynamic-config-value',
        'system.forceSearchAttributesCacheRefreshOnRead=false',
      ],
    },
  });
}
