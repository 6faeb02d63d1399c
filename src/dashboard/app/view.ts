// The page the dashboard shows: app.tsx renders it, and each page navigates to another.
export type View =
  | { name: 'list'; notice?: string }
  | { name: 'register' }
  | { name: 'webhook'; id: string }
  | { name: 'notices' }
  | { name: 'tokens' }
  | { name: 'audit' }
  | { name: 'usage' };
