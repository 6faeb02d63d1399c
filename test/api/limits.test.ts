import { describe, expect, it } from 'vitest';
import { byteSize } from '../../src/limits';

describe('byteSize', () => {
  it('states a limit as the OpenAPI document gives it', () => {
    expect(byteSize(64 * 1024)).toBe('64 KiB');
    expect(byteSize(1024 * 1024)).toBe('1 MiB');
    expect(byteSize(1000)).toBe('1000 bytes');
  });
});
