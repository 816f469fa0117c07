import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Browser, BrowserContext, chromium, Page } from 'playwright-core';
import { repoRoot } from '../../scripts/lib/processes';

/** Debian's Chromium (.ci/run installs it when missing); CHROMIUM_PATH for another one. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/** CONSOLE_SCREENSHOTS=1 refreshes the pictures in docs/console; otherwise they go to this run's log folder. */
export const SHOTS =
  process.env.CONSOLE_SCREENSHOTS === '1'
    ? join(repoRoot(), 'docs', 'console')
    : join(process.env.TEST_LOG_DIR ?? join(repoRoot(), 'test', '.logs', 'adhoc'), 'console');

/**
 * Chromium for the page suites (with the screenshot folder made). Running as root (CI) needs
 * --no-sandbox; only the gateway's own pages are loaded.
 */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium (.ci/run does)`);
  mkdirSync(SHOTS, { recursive: true });
  return chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
}

/** Chromium driven by playwright-core for the console's suites: signed-in pages and screenshots. */
export class ConsoleBrowser {
  readonly contexts: BrowserContext[] = [];

  private constructor(readonly browser: Browser) {}

  static async launch(): Promise<ConsoleBrowser> {
    return new ConsoleBrowser(await launchChromium());
  }

  /** A new browser context signed in to the console at `baseUrl` with an operator token, on the overview. */
  async signedIn(baseUrl: string, token: string): Promise<Page> {
    const context = await this.browser.newContext({ viewport: { width: 1280, height: 900 } });
    this.contexts.push(context);
    const page = await context.newPage();
    await page.goto(`${baseUrl}/console/sign-in`);
    await page.fill('#token', token);
    await Promise.all([page.waitForURL(/\/console\/overview$/), page.click('button[type=submit]')]);
    return page;
  }

  shot(page: Page, name: string): Promise<Buffer> {
    return page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
  }

  async close(): Promise<void> {
    for (const c of this.contexts) await c.close().catch(() => undefined);
    await this.browser.close();
  }
}
