// How tests expect the library's errors: by class name, stable code and exact message.
import { expect } from 'vitest';

/**
 * An asymmetric matcher for the library's `RateWardenTypeError` (code
 * `ERR_RATEWARDEN_INVALID_TYPE`) or `RateWardenRangeError` (code `ERR_RATEWARDEN_OUT_OF_RANGE`)
 * with exactly `message`: `expect(f).toThrow(exactly(TypeError, 'Expected `key` to be …'))`.
 */
export const exactly = (type: typeof TypeError | typeof RangeError, message: string): unknown =>
  expect.objectContaining({
    name: type.name,
    code: type === TypeError ? 'ERR_RATEWARDEN_INVALID_TYPE' : 'ERR_RATEWARDEN_OUT_OF_RANGE',
    message,
  });
