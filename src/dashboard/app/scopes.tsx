// What the signed-in token may do: its scopes (GET /v3/account/token, read as the tab signs in),
// given to the views through a context. A view asks by the routes a control would call, in the
// table the API enforces (ROUTE_SCOPES, src/scopes.ts), and shows in plain words what the token
// may not do where that control would be, rather than a control the API would refuse.
import { createContext, type ComponentChildren } from 'preact';
import { useContext } from 'preact/hooks';
import { ROUTE_SCOPES, SCOPES, lackingScope, type Route, type Scope } from '../../scopes';

export const ScopesContext = createContext<readonly Scope[]>(SCOPES);

/** The first scope the signed-in token lacks for any of `routes`, or null when it may call them all. */
export function useLacking(...routes: Route[]): Scope | null {
  const held = useContext(ScopesContext);
  for (const route of routes) {
    const lacking = lackingScope(held, ROUTE_SCOPES[route]);
    if (lacking) return lacking;
  }
  return null;
}

/** Said where a control would be that the token may not use: what, and the scope it lacks. */
export function NotAllowed({ scope, what }: { scope: Scope; what: string }) {
  return (
    <p class="not-allowed">
      This token may not {what}: it lacks the scope <span class="mono">{scope}</span>.
    </p>
  );
}

/** `children` when the signed-in token may call every one of `routes`; otherwise, in their place, why not. */
export function IfAllowed({ routes, what, children }: { routes: Route[]; what: string; children: ComponentChildren }) {
  const lacking = useLacking(...routes);
  return lacking ? <NotAllowed scope={lacking} what={what} /> : <>{children}</>;
}
