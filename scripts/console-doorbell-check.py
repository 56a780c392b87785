#!/usr/bin/env python3
"""Drives the doorbell panel of the ipcemu web console in headless Chromium (PROTOCOL.md 8; stdlib
only, reusing console-check.py's DevTools client).

Opens the console, waits for the first device's doorbell panel, and (if the device sleeps) for the
power pill to say asleep; clicks Wake and waits for awake; clicks Motion and waits for the motion
snapshot, then Press and waits for the press snapshot (an <img> from the media route, loaded:
naturalWidth > 0); sets DP 134 to false with the DP form and waits for the DP table to show it.
Optionally takes a screenshot at the end. Prints one JSON line with what it saw;
exits 0 only if everything was seen.

usage: console-doorbell-check.py CONSOLE_URL [--screenshot FILE] [--chromium PATH] [--timeout SECONDS] [--asleep]
"""
import argparse, base64, importlib.util, json, os, shutil, subprocess, tempfile, time, urllib.request

here = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("console_check", os.path.join(here, "console-check.py"))
cc = importlib.util.module_from_spec(spec)
spec.loader.exec_module(cc)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("url")
    ap.add_argument("--screenshot")
    ap.add_argument("--chromium", default=shutil.which("chromium") or shutil.which("chromium-browser") or "chromium")
    ap.add_argument("--timeout", type=float, default=20)
    ap.add_argument("--asleep", action="store_true", help="the device sleeps first: wait for asleep, then Wake")
    args = ap.parse_args()
    profile = tempfile.mkdtemp(prefix="ipcemu-chromium-")
    browser = subprocess.Popen(
        [args.chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--hide-scrollbars",
         "--remote-debugging-port=0", f"--user-data-dir={profile}", "--window-size=1200,900", args.url],
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
        page = cc.Page(cc.WebSocket(page_target["webSocketDebuggerUrl"], args.timeout))
        page.wait_for("!!document.querySelector('.doorbell') && document.getElementById('live').textContent === 'live'",
                      args.timeout, "the doorbell panel to load and go live")
        power = "(document.querySelector('[data-power]') || {}).dataset.power"
        seen["kind"] = page.eval("document.querySelector('.doorbell').dataset.kind")
        if args.asleep:
            page.wait_for(f"{power} === 'asleep'", args.timeout, "the device to show asleep")
            seen["asleep"] = True
            page.eval("document.querySelector('button[data-action=wake]').click(); true")
            page.wait_for(f"{power} === 'awake'", args.timeout, "the device to show awake after Wake")
            seen["wokeByButton"] = True
        img = "(() => { const i = document.querySelector('.snapshot img'); return i && i.complete && i.naturalWidth > 0 ? i.dataset.path : null; })()"
        page.eval("document.querySelector('button[data-action=motion]').click(); true")
        page.wait_for(f"({img}) && ({img}).includes('/media/motion-')", args.timeout, "the motion snapshot to show")
        seen["motionSnapshot"] = page.eval(img)
        page.eval("document.querySelector('button[data-action=press]').click(); true")
        page.wait_for(f"({img}) && ({img}).includes('/media/press-')", args.timeout, "the press snapshot to show")
        seen["pressSnapshot"] = page.eval(img)
        seen["snapshotSize"] = page.eval("(() => { const i = document.querySelector('.snapshot img'); return [i.naturalWidth, i.naturalHeight]; })()")
        page.eval("(() => { const id = document.querySelector('input[data-dp=id]'), v = document.querySelector('input[data-dp=value]');"
                  " id.value = '134'; id.dispatchEvent(new Event('input')); v.value = 'false'; v.dispatchEvent(new Event('input'));"
                  " document.querySelector('button[data-action=set-dp]').click(); return true; })()")
        dp134 = "(() => { const r = document.querySelector('tr[data-dp-id=\"134\"]'); return r ? r.lastChild.textContent : null; })()"
        page.wait_for(f"{dp134} === 'false'", args.timeout, "DP 134 to show false")
        seen["dp134"] = page.eval(dp134)
        seen["dps"] = page.eval("document.querySelectorAll('table.dps tr').length")
        seen["power"] = page.eval(power)
        if args.screenshot:
            time.sleep(0.5)
            shot = page.call("Page.captureScreenshot", format="png")
            with open(args.screenshot, "wb") as f:
                f.write(base64.b64decode(shot["data"]))
        print(json.dumps(seen))
        return 0
    except Exception as e:  # report what was seen so far
        seen["error"] = str(e)
        print(json.dumps(seen))
        return 1
    finally:
        browser.kill()
        browser.wait()
        shutil.rmtree(profile, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
