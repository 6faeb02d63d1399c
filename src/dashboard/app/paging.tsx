// Paging newest first, as the API pages its lists: each page after the first is asked for
// with the `next` of the one before it, so going back means remembering those.
import { useState } from 'preact/hooks';

export interface Pages {
  /** The `before` of the page shown: null for the newest. */
  before: string | null;
  newest: boolean;
  /** Back to the newest page (a filter changed, or something new was logged). */
  reset: () => void;
  newer: () => void;
  older: (next: string) => void;
}

export function usePages(): Pages {
  // The `before` of each page shown so far: the last is the current page.
  const [shown, show] = useState<(string | null)[]>([null]);
  return {
    before: shown[shown.length - 1],
    newest: shown.length === 1,
    reset: () => show([null]),
    newer: () => show(shown.slice(0, -1)),
    older: (next) => show([...shown, next]),
  };
}

/** Newer and Older: `next` is the current page's, absent while it loads. */
export function PageButtons({ pages, next }: { pages: Pages; next: string | null | undefined }) {
  return (
    <div class="row paging">
      <button type="button" disabled={pages.newest} onClick={pages.newer}>
        Newer
      </button>
      <button type="button" disabled={!next} onClick={() => next && pages.older(next)}>
        Older
      </button>
    </div>
  );
}
