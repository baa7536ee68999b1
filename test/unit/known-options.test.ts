// The rules of the check of unknown option keys shared by every options object (see
// unknown-options.test.ts for the table over the public API): which keys are checked, which
// option is suggested, and how a key is shown in the message.
import { describe, expect, it } from 'vitest';
import { ErrorCode, RateWardenTypeError } from '../../src/index.js';
import { checkKnownKeys, knownOptions } from '../../src/errors.js';

describe('the rules of the unknown-option check', () => {
  const known = knownOptions('test options', { maxKeys: true, windowSeconds: true, timeoutSeconds: true, cost: true, name: true });
  const message = (options: object): string | undefined => {
    try {
      checkKnownKeys(options, known);
      return undefined;
    } catch (error) {
      return (error as Error).message;
    }
  };

  it('throws a RateWardenTypeError with its own code, naming the key and the object', () => {
    let error: unknown;
    try {
      checkKnownKeys({ maxKeys: 1, maxkeys: 2 }, known);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(RateWardenTypeError);
    expect((error as RateWardenTypeError).code).toBe(ErrorCode.UnknownOption);
    expect((error as Error).message).toBe('Unknown option `maxkeys` in test options: did you mean `maxKeys`?');
    // Another name for the object, where one list serves several (`members[1]`).
    expect(() => checkKnownKeys({ x: 1 }, known, 'members[1]')).toThrow(/^Unknown option `x` in members\[1\]: expected one of/);
  });

  it('suggests the option meant: case, a unit suffix, one or two edits, a transposition', () => {
    const meant = (key: string) => /did you mean `(\w+)`\?$/.exec(message({ [key]: 1 }) ?? '')?.[1];
    expect(meant('maxkeys')).toBe('maxKeys');
    expect(meant('MAXKEYS')).toBe('maxKeys');
    expect(meant('windowMs')).toBe('windowSeconds');
    expect(meant('window')).toBe('windowSeconds');
    expect(meant('timeout')).toBe('timeoutSeconds');
    expect(meant('timeoutMilliseconds')).toBe('timeoutSeconds');
    expect(meant('maxKey')).toBe('maxKeys');
    expect(meant('mxaKeys')).toBe('maxKeys');
    expect(meant('windowSecnods')).toBe('windowSeconds');
    expect(meant('cots')).toBe('cost');
    expect(meant('nmae')).toBe('name');
    // Too far: short keys allow one edit, longer ones two.
    expect(meant('cat')).toBeUndefined();
    expect(meant('maxKeysXYZ')).toBeUndefined();
    expect(meant('limit')).toBeUndefined();
    expect(meant('s')).toBeUndefined();
  });

  it('checks own enumerable string keys only, whatever their value', () => {
    expect(message({ maxKeys: 1, cost: undefined })).toBeUndefined();
    expect(message({ other: undefined })).toMatch(/^Unknown option `other` in test options/);
    // Symbols, non-enumerable and inherited keys are not options.
    expect(message({ [Symbol('tag')]: 1, maxKeys: 1 })).toBeUndefined();
    expect(message(Object.defineProperty({ cost: 1 }, 'hidden', { value: 1, enumerable: false }))).toBeUndefined();
    expect(message(Object.create({ inherited: 1 }) as object)).toBeUndefined();
    // An own `__proto__` key is a key like any other.
    expect(message(JSON.parse('{"__proto__": 1}') as object)).toMatch(/^Unknown option `__proto__`/);
    // Getters are never called.
    expect(message({ get cost() { throw new Error('read'); } })).toBeUndefined();
  });

  it('shows a hostile key escaped and shortened', () => {
    expect(message({ 'a\u001b[31mX\u0007\rfake': 1 })).toMatch(/^Unknown option `"a\\u001b\[31mX\\u0007\\rfake"` in test options/);
    expect(message({ 'x\u009b\u2028': 1 })).toMatch(/^Unknown option `"x\\u009b\\u2028"`/);
    expect(message({ '': 1 })).toMatch(/^Unknown option `""`/);
    expect(message({ 'a`b': 1 })).toMatch(/^Unknown option `"a`b"`/);
    const long = message({ ['k'.repeat(1000)]: 1 }) ?? '';
    expect(long).toContain(`\`"${'k'.repeat(57)}..."\``);
    expect(long.length).toBeLessThan(250);
  });
});
