// Following a promise without awaiting it, shared by the tests of waiting (wait-queue,
// abort-watch): a test then moves fake time and checks what has settled so far.

/** What a tracked promise has done so far. */
export interface Tracked<T> {
  done: boolean;
  rejected: boolean;
  value?: T;
  error?: unknown;
}

/** Follows `promise` without awaiting it: the returned object fills in when it settles. */
export function track<T>(promise: Promise<T>): Tracked<T> {
  const state: Tracked<T> = { done: false, rejected: false };
  promise.then(
    (value) => {
      state.done = true;
      state.value = value;
    },
    (error: unknown) => {
      state.done = true;
      state.rejected = true;
      state.error = error;
    },
  );
  return state;
}
