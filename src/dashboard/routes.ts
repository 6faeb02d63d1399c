// Serves the dashboard: a static page and its bundle, built at build time
// (`npm run build:dashboard`) into dist/dashboard, and the settings it reads from the
// service's configuration. The page talks to the public /v3 API only, with the account
// token the user signs in with; serving it needs no token.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import Router from '@koa/router';
import { ROUTER_OPTIONS, type ApiState } from '../api/middleware';
import type { DashboardSettings } from './settings';

// TypeScript mirrors the sources under dist/: this module runs as src/dashboard (the tests)
// or as dist/src/dashboard (npm start), and the bundle is in dist/dashboard either way.
const TWO_UP = path.resolve(__dirname, '..', '..');
const ASSETS_DIR = path.join(path.basename(TWO_UP) === 'dist' ? TWO_UP : path.join(TWO_UP, 'dist'), 'dashboard');

const ASSETS: Record<string, { file: string; type: string }> = {
  '/dashboard': { file: 'index.html', type: 'text/html; charset=utf-8' },
  '/dashboard/app.js': { file: 'app.js', type: 'text/javascript; charset=utf-8' },
  '/dashboard/app.css': { file: 'app.css', type: 'text/css; charset=utf-8' },
  '/dashboard/favicon.svg': { file: 'favicon.svg', type: 'image/svg+xml' },
};

/** Only the page's own files: no inline script or style, no framing, no referrer, no sniffing. */
const DASHBOARD_HEADERS = {
  'Content-Security-Policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
    "object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
  'Cache-Control': 'no-cache',
};

export function dashboardRoutes(settings: DashboardSettings): Router<ApiState> {
  const router = new Router<ApiState>(ROUTER_OPTIONS);
  router.get('/dashboard/settings.json', (ctx) => {
    ctx.set(DASHBOARD_HEADERS);
    ctx.body = settings;
  });
  for (const [route, asset] of Object.entries(ASSETS)) {
    router.get(route, async (ctx) => {
      ctx.set(DASHBOARD_HEADERS);
      ctx.type = asset.type;
      ctx.body = await readAsset(asset.file);
    });
  }
  return router;
}

async function readAsset(file: string): Promise<Buffer> {
  try {
    return await readFile(path.join(ASSETS_DIR, file));
  } catch (error) {
    throw new Error(`The dashboard is not built (${file} missing in ${ASSETS_DIR}): run npm run build`, { cause: error });
  }
}
