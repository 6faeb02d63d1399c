// Focus for what takes the place of the button that was pressed: without it, the focus falls
// to the page's body when that button goes, and a keyboard user starts again from the top.
import { useEffect, useRef } from 'preact/hooks';

/** A ref whose element is focused when it first appears, if `when` is true then. */
export function useFocusOnArrival<T extends HTMLElement>(when = true) {
  const element = useRef<T>(null);
  useEffect(() => {
    if (when) element.current?.focus();
  }, []);
  return element;
}
