import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { chromium, type Browser as Chromium, type Page } from "playwright-core";
import AxeBuilder from "@axe-core/playwright";

/** Debian's Chromium (`apt-get install chromium`; `.ci/run` installs it); Playwright's own download is never used. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

/** Flags that keep Chromium off the network on a closed machine (no background fetches, no QUIC). */
const FLAGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/** Launches the machine's headless Chromium through playwright-core. */
export async function launchChromium(): Promise<Chromium> {
  if (!existsSync(CHROMIUM_PATH)) throw new Error(`no Chromium at ${CHROMIUM_PATH}: apt-get install -y chromium (or set CHROMIUM_PATH)`);
  return chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: FLAGS });
}

/** Where browser tests leave screenshots (gitignored). */
export const ARTIFACTS_DIR = join(__dirname, "..", "..", "..", "test-artifacts");

export async function screenshot(page: Page, name: string): Promise<void> {
  const dir = join(ARTIFACTS_DIR, "dashboard");
  mkdirSync(dir, { recursive: true });
  await page.screenshot({ path: join(dir, `${name}.png`), fullPage: true });
}

/** axe-core's WCAG 2.x A and AA rules on the page as it stands: the violations, as "rule: target" lines. */
export async function accessibilityViolations(page: Page): Promise<string[]> {
  const result = await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]).analyze();
  return result.violations.flatMap((v) => v.nodes.map((n) => `${v.id}: ${n.target.join(" ")} (${v.help})`));
}
