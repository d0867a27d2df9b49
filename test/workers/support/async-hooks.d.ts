// `node:async_hooks` exists inside workerd under `nodejs_compat` (the test pool's flag, see
// vitest.config.ts), but the Workers types do not declare it: the part the tests use.
declare module "node:async_hooks" {
  export class AsyncLocalStorage<T> {
    run<R>(store: T, fn: () => R): R;
    getStore(): T | undefined;
  }
}
