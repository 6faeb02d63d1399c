// Debian's Chromium, headless, driven by playwright-core (which downloads no browser).
import path from 'node:path';
import { chromium, type Browser } from 'playwright-core';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Where the screenshots the docs show are written. */
export const SCREENSHOTS = path.join(__dirname, '..', 'screenshots');
/** The docs' own folder, for the screenshots that stand beside them. */
export const DOCS = path.join(__dirname, '..', '..', '..', 'docs');

export async function launchChromium(): Promise<Browser> {
  try {
    return await chromium.launch({
      executablePath: CHROMIUM,
      // Root in a sandbox of its own, and no network beyond loopback.
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
  } catch (error) {
    throw new Error(
      `This test needs Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH): ${(error as Error).message}`,
      { cause: error },
    );
  }
}
