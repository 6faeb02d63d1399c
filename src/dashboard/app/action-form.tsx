// A form whose submission runs an action in the page. It is never submitted natively: the
// page's CSP allows no form action, and its fields would end up in a URL.
import type { ComponentChildren } from 'preact';

interface Props {
  onSubmit: () => void;
  class?: string;
  children: ComponentChildren;
}

export function ActionForm({ onSubmit, class: className, children }: Props) {
  return (
    <form
      class={className}
      onSubmit={(event) => {
        event.preventDefault();
        onSubmit();
      }}
      method="post"
      action="#"
      noValidate
    >
      {children}
    </form>
  );
}
