import { chmod, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { findTemporalCli, PrerequisiteError } from '../../src/temporal/dev-server';

async function dirWithExecutable(name: string): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'cli-'));
  await writeFile(path.join(dir, name), '#!/bin/sh\n');
  await chmod(path.join(dir, name), 0o755);
  return dir;
}

describe('findTemporalCli', () => {
  it('takes TEMPORAL_CLI_PATH first, and refuses one that is not executable', async () => {
    const dir = await dirWithExecutable('my-temporal');
    const explicit = path.join(dir, 'my-temporal');
    expect(await findTemporalCli({ TEMPORAL_CLI_PATH: explicit, PATH: '' })).toBe(explicit);
    await expect(findTemporalCli({ TEMPORAL_CLI_PATH: path.join(dir, 'missing'), PATH: '' })).rejects.toThrow(
      /TEMPORAL_CLI_PATH=.*missing is not an executable file/,
    );
  });

  it('then looks for temporal on PATH', async () => {
    const dir = await dirWithExecutable('temporal');
    expect(await findTemporalCli({ PATH: `/nonexistent${path.delimiter}${dir}` })).toBe(path.join(dir, 'temporal'));
  });

  it('says what to install when there is neither a CLI nor Go', async () => {
    const empty = await mkdtemp(path.join(tmpdir(), 'no-cli-'));
    const error = await findTemporalCli({ PATH: empty }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(PrerequisiteError);
    expect((error as Error).message).toMatch(/Temporal CLI was not found and Go is not installed: install Go/);
  });
});
