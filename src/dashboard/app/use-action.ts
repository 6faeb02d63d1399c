// One button's action: whether it runs, what it returned, and the error to show beside it.
import { useState } from 'preact/hooks';

export interface Action<A extends unknown[], T> {
  /** Starts the action; its outcome shows in `busy`, `error` and `result`, never as a rejection. */
  run: (...args: A) => void;
  busy: boolean;
  error: unknown;
  result?: T;
  reset: () => void;
}

export function useAction<A extends unknown[], T>(action: (...args: A) => Promise<T>, onDone?: (result: T) => void): Action<A, T> {
  const [state, setState] = useState<{ busy: boolean; error: unknown; result?: T }>({ busy: false, error: null });
  const execute = async (...args: A) => {
    setState({ busy: true, error: null });
    try {
      const result = await action(...args);
      setState({ busy: false, error: null, result });
      onDone?.(result);
    } catch (error) {
      setState({ busy: false, error });
    }
  };
  return {
    ...state,
    run: (...args) => void execute(...args),
    reset: () => setState({ busy: false, error: null }),
  };
}
