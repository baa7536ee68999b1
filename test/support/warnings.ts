// Captures what the code under test passes to `process.emitWarning`, so that a test can assert on
// its warnings without Node printing them on the test run's stderr.
import { vi } from 'vitest';

/** One `process.emitWarning(message, { type, code })` call. */
export interface CapturedWarning {
  readonly message: string;
  readonly type: string | undefined;
  readonly code: string | undefined;
}

/**
 * Replaces `process.emitWarning` until `restore()`: every call is recorded in `warnings` (only
 * those with `code`, when given) and none is printed.
 */
export function captureWarnings(code?: string): { readonly warnings: CapturedWarning[]; restore: () => void } {
  const warnings: CapturedWarning[] = [];
  const spy = vi.spyOn(process, 'emitWarning').mockImplementation(((warning: string | Error, options?: unknown) => {
    const message = typeof warning === 'string' ? warning : warning.message;
    const fields =
      typeof options === 'object' && options !== null
        ? (options as { type?: string; code?: string })
        : { type: typeof options === 'string' ? options : undefined, code: undefined };
    if (code === undefined || fields.code === code) warnings.push({ message, type: fields.type, code: fields.code });
  }));
  return {
    warnings,
    restore: () => {
      spy.mockRestore();
    },
  };
}
