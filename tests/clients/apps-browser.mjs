// apps-browser.mjs: drives the MCP Apps test host (apps-host.html) in
// headless Chromium with playwright-core: the host must list the tool,
// read its ui:// resource, render the view in a sandboxed frame that shows
// the tool's result; pressing the view's button must add one tools/call to
// the server's log and show the new result. Prints "ok - what" or
// "not ok - what: why" per check, and saves a screenshot.
//
//   node apps-browser.mjs PAGE-URL SERVER-LOG SCREENSHOT HOSTNAME ERA
import { readFileSync } from 'node:fs';
import { chromium } from 'playwright-core';

const [pageUrl, serverLog, shot, hostname, want] = process.argv.slice(2);
const check = (cond, what, why = '') => console.log(cond ? `ok - ${what}` : `not ok - ${what}${why ? ': ' + why : ''}`);
// the server's log lines of a tools/call of host_info
const calls = () => readFileSync(serverLog, 'utf8').split('\n')
    .filter(l => / method=tools\/call /.test(l) && / target=host_info /.test(l)).length;
// waits up to ms for fn() to be true
const until = async (fn, ms) => {
    for (const end = Date.now() + ms; Date.now() < end; await new Promise(r => setTimeout(r, 50)))
        if (fn())
            return true;
    return fn();
};

const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
try {
    const page = await browser.newPage({ viewport: { width: 640, height: 480 } });
    page.on('console', m => m.type() !== 'debug' && console.log(`console ${m.type()}: ${m.text()}`));
    page.on('pageerror', e => console.log(`page error: ${e.message}`));
    const start = calls();
    await page.goto(pageUrl);
    await page.waitForFunction(() => window.hostState && (window.hostState.rendered || window.hostState.error),
        null, { timeout: 30000 }).catch(() => {});
    const st = await page.evaluate(() => window.hostState);
    check(st && !st.error, 'the host connects, lists, reads and renders without an error', st && st.error);
    if (!st || st.error)
        process.exit(0);
    check(st.era === want, `the host's client speaks ${want}`, st.era);
    check(st.caps && st.caps.extensions && st.caps.extensions['io.modelcontextprotocol/ui'] !== undefined,
        'the host sees the io.modelcontextprotocol/ui capability', JSON.stringify(st.caps));
    check(st.tools.includes('host_info') && st.tool === 'host_info', 'the host lists host_info, the tool with an app',
        st.tools.join(','));
    check(st.uri === 'ui://phantom/host-info' && st.flat === st.uri, 'its _meta.ui.resourceUri and ui/resourceUri name ui://phantom/host-info',
        `${st.uri} ${st.flat}`);
    check(st.items === 1 && st.mime === 'text/html;profile=mcp-app', 'resources/read gives one item of text/html;profile=mcp-app',
        `${st.items} ${st.mime}`);

    const frame = page.locator('iframe#view');
    check(await frame.getAttribute('sandbox') === 'allow-scripts', 'the view is in a frame sandboxed to scripts only');
    const view = page.frameLocator('iframe#view');
    const status = view.locator('#status');
    await status.filter({ hasText: 'result from the host' }).waitFor({ timeout: 15000 }).catch(() => {});
    check(await status.textContent() === 'result from the host', 'the view shows the result the host passed it',
        await status.textContent());
    const origin = await page.frames().find(f => f !== page.mainFrame()).evaluate(() => window.origin);
    check(origin === 'null', 'the view runs with an opaque origin', origin);
    check(await view.locator('#hostname').textContent() === hostname, 'the view shows the host name from structuredContent',
        await view.locator('#hostname').textContent());
    const uptime1 = await view.locator('#uptime').textContent();

    const before = calls();
    check(before === start + 1, "the server's log has the host's own tools/call of host_info", `${before - start} calls`);
    await new Promise(r => setTimeout(r, 1100)); // so that the uptime moves on
    await view.locator('#refresh').click();
    await status.filter({ hasText: 'refreshed (call 1)' }).waitFor({ timeout: 15000 }).catch(() => {});
    check(await status.textContent() === 'refreshed (call 1)', "pressing the view's Refresh button shows the new result",
        await status.textContent());
    check(await until(() => calls() === before + 1, 5000), "the button press reached the server: one more tools/call in its log",
        `${calls()} calls`);
    const uptime2 = await view.locator('#uptime').textContent();
    check(uptime2 !== uptime1, 'the view shows the new uptime', `${uptime1} then ${uptime2}`);
    await page.screenshot({ path: shot });
    check(true, `screenshot saved`);
} finally {
    await browser.close();
}
