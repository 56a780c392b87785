#!/usr/bin/env python3
"""Opens an `ipcemu scenario run --report` HTML file in headless Chromium over the DevTools protocol
(stdlib only; the WebSocket and Page helpers come from console-check.py) and prints one JSON line
with what the page shows: the verdict, the sequence diagrams (SVGs, arrows, lanes), the plots
(SVGs, drawn series, limit lines), and the resources it loaded (none: the report is self-contained).
With --screenshot, writes a PNG of the top of the page. Exits 0 only if the page shows at least one
sequence diagram with arrows and two plots with drawn series, and loaded nothing.

usage: report-check.py REPORT.html [--screenshot FILE] [--chromium PATH] [--timeout SECONDS]
"""
import argparse, base64, importlib.util, json, os, shutil, subprocess, sys, tempfile, time, urllib.request

here = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("console_check", os.path.join(here, "console-check.py"))
console_check = importlib.util.module_from_spec(spec)
spec.loader.exec_module(console_check)

SHAPE = """(() => {
  const seq = [...document.querySelectorAll('svg.sequence')];
  const plots = [...document.querySelectorAll('svg.plot')];
  const visible = e => { const r = e.getBoundingClientRect(); return r.width > 50 && r.height > 50; };
  return {
    title: document.title,
    verdict: (document.querySelector('h1 span') || {}).textContent || null,
    sequenceDiagrams: seq.length,
    sequenceVisible: seq.filter(visible).length,
    arrowsInFirst: seq.length ? seq[0].querySelectorAll('line.msg').length : 0,
    lanesInFirst: seq.length ? seq[0].querySelectorAll('rect[rx="4"]').length : 0,
    plots: plots.length,
    plotsVisible: plots.filter(visible).length,
    plotIds: plots.map(p => p.id),
    seriesDrawn: plots.map(p => p.querySelectorAll('polyline.series, circle').length),
    limitLines: plots.map(p => p.querySelectorAll('line.limit').length),
    scripts: document.querySelectorAll('script').length,
    resourcesLoaded: performance.getEntriesByType('resource').map(r => r.name),
    externalRefs: [...document.querySelectorAll('[src],[href]')].map(e => e.getAttribute('src') || e.getAttribute('href'))
      .filter(u => /^(https?:)?\\/\\//.test(u)),
  };
})()"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("report")
    ap.add_argument("--screenshot")
    ap.add_argument("--chromium", default=shutil.which("chromium") or shutil.which("chromium-browser") or "chromium")
    ap.add_argument("--timeout", type=float, default=20)
    args = ap.parse_args()
    url = "file://" + os.path.abspath(args.report)
    profile = tempfile.mkdtemp(prefix="ipcemu-report-chromium-")
    browser = subprocess.Popen(
        [args.chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--hide-scrollbars",
         "--remote-debugging-port=0", f"--user-data-dir={profile}", "--window-size=1280,1500", url],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    seen = {}
    try:
        port_file = os.path.join(profile, "DevToolsActivePort")
        deadline = time.time() + args.timeout
        while not (os.path.exists(port_file) and open(port_file).read().count("\n") >= 1):
            if time.time() > deadline or browser.poll() is not None:
                raise RuntimeError("chromium did not start its DevTools endpoint")
            time.sleep(0.1)
        port = int(open(port_file).read().split("\n")[0])
        targets = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=5))
        page_target = next(t for t in targets if t.get("type") == "page")
        page = console_check.Page(console_check.WebSocket(page_target["webSocketDebuggerUrl"], args.timeout))
        page.wait_for("document.readyState === 'complete' && document.querySelectorAll('svg').length > 0",
                      args.timeout, "the report to load")
        seen = page.eval(SHAPE)
        if args.screenshot:
            shot = page.call("Page.captureScreenshot", format="png")
            with open(args.screenshot, "wb") as f:
                f.write(base64.b64decode(shot["data"]))
        ok = (seen["sequenceVisible"] >= 1 and seen["arrowsInFirst"] >= 2 and seen["plotsVisible"] >= 2
              and all(n > 0 for n in seen["seriesDrawn"][:2]) and not seen["resourcesLoaded"]
              and not seen["externalRefs"] and seen["scripts"] == 0)
        seen["ok"] = ok
        print(json.dumps(seen))
        return 0 if ok else 1
    except Exception as e:  # report what was seen so far
        seen["error"] = str(e)
        print(json.dumps(seen))
        return 1
    finally:
        browser.terminate()
        try:
            browser.wait(timeout=5)
        except subprocess.TimeoutExpired:
            browser.kill()
        shutil.rmtree(profile, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
