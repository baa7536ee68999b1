// Fails a test file's tests when a promise rejection goes unhandled while they run: registers
// the vitest hooks (listen for the file, check after each test). A failed or timed-out decision
// must leave no unhandled rejection behind.
import { afterAll, afterEach, beforeAll, expect } from 'vitest';

/** Registers the hooks; call once at a test file's top level. */
export function failOnUnhandledRejections(): void {
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown): void => {
    unhandled.push(reason);
  };
  beforeAll(() => {
    process.on('unhandledRejection', onUnhandled);
  });
  afterAll(() => {
    process.off('unhandledRejection', onUnhandled);
  });
  afterEach(() => {
    expect(unhandled).toEqual([]);
  });
}
