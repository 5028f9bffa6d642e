// Drives headless Chromium (the system's, through puppeteer-core) through the host page of
// host.js against an MCP server, and prints one JSON line with what it saw. Run by
// tests/interop/test_apps_browser.py:
//
//   node browser_check.mjs CHROMIUM BASE_URL MCP_PATH TOOL ARGS_JSON TEXT_SELECTOR CLICK_SELECTOR
//                          SCREENSHOT [PAGE_ORIGIN]
//
// The host page is served at BASE_URL/__host__/ by intercepting the browser's requests, so it
// has the MCP server's own origin; every other request (the MCP endpoint) goes to the server
// itself, Origin header and all. With PAGE_ORIGIN the page is served there instead, another
// origin than the server's (the browser then sends the MCP requests cross-origin). It waits for the view to show the tool's result (the text of
// TEXT_SELECTOR), clicks CLICK_SELECTOR in the view (which calls a server tool through the
// host), waits for the text to change, and saves a screenshot.
import { build } from "esbuild";
import puppeteer from "puppeteer-core";
import { fileURLToPath } from "node:url";
import path from "node:path";

const [chromium, base, mcpPath, tool, args, textSelector, clickSelector, screenshot, origin] =
  process.argv.slice(2);
const here = path.dirname(fileURLToPath(import.meta.url));

const bundled = await build({
  entryPoints: [path.join(here, "host.js")],
  bundle: true,
  write: false,
  format: "esm",
  platform: "browser",
  logLevel: "error",
});
const script = bundled.outputFiles[0].text;
const page_html = `<!doctype html><html><head><meta charset="utf-8"><title>host</title></head>
<body><script type="module" src="/__host__/host.js"></script></body></html>`;

const seen = { console: [] };
const browser = await puppeteer.launch({
  executablePath: chromium,
  headless: true,
  args: [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    // A page of a public origin reaching 127.0.0.1: let its requests leave the browser, so that
    // what answers them is the server's own Origin check.
    ...(origin ? ["--disable-features=LocalNetworkAccessChecks,BlockInsecurePrivateNetworkRequests,PrivateNetworkAccessSendPreflights"] : []),
  ],
});
try {
  const page = await browser.newPage();
  page.on("console", (message) => seen.console.push(message.text()));
  await page.setRequestInterception(true);
  page.on("request", (request) => {
    const url = new URL(request.url());
    if (url.pathname === "/__host__/index.html") {
      request.respond({ status: 200, contentType: "text/html", body: page_html });
    } else if (url.pathname === "/__host__/host.js") {
      request.respond({ status: 200, contentType: "text/javascript", body: script });
    } else {
      request.continue();
    }
  });
  const query = new URLSearchParams({ mcp: `${base}${mcpPath}`, tool, args });
  await page.goto(`${origin || base}/__host__/index.html?${query}`);
  await page.waitForFunction(
    () => window.hostState && (window.hostState.error || window.hostState.steps.includes("result-sent")),
    { timeout: 20000 },
  );
  seen.steps = await page.evaluate(() => window.hostState.steps);
  seen.error = await page.evaluate(() => window.hostState.error);
  if (!seen.error) {
    const frame = await (await page.waitForSelector("iframe#app")).contentFrame();
    const textOf = () => frame.$eval(textSelector, (node) => node.textContent.trim());
    await frame.waitForFunction(
      (selector) => {
        const node = document.querySelector(selector);
        return node && node.textContent.trim() && !/waiting|loading/i.test(node.textContent);
      },
      { timeout: 10000 },
      textSelector,
    );
    seen.shown = await textOf();
    await frame.click(clickSelector);
    await frame.waitForFunction(
      (selector, before) => document.querySelector(selector).textContent.trim() !== before,
      { timeout: 10000 },
      textSelector,
      seen.shown,
    );
    seen.clicked = await textOf();
    await page.screenshot({ path: screenshot });
    seen.screenshot = screenshot;
  }
} finally {
  await browser.close();
}
console.log(JSON.stringify(seen));
