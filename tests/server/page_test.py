#!/usr/bin/env python3
"""The server's page (server/page.html) driven in headless Chromium.

Starts `fastsmt -f examples/sample/moses.ini --server --server-port 0`, opens GET / in Chromium
(spoken to over the DevTools protocol on --remote-debugging-pipe, standard library only), types a
sentence into #src, clicks #go and reads #out, the n-best table and the phrase alignment: the
translation must equal what `fastsmt -f examples/sample/moses.ini` prints for that sentence.
Usage: page_test.py FASTSMT_BINARY SOURCE_DIR
Exits 77 (skipped) without Chromium (chromium, chromium-browser or google-chrome on PATH, or
FASTSMT_CHROMIUM), unless FASTSMT_REQUIRE_CHROMIUM is set (CI): a failure then."""
import fcntl
import json
import os
import queue
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

SKIP = 77
TIMEOUT_S = 90


def fail(msg):
    print("page_test: FAIL: " + msg, flush=True)
    sys.exit(1)


def find_chromium():
    env = os.environ.get("FASTSMT_CHROMIUM")
    if env:
        return env if os.access(env, os.X_OK) else None
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


class Server:
    """fastsmt --server on an ephemeral loopback port; its stderr is kept for failure reports."""

    def __init__(self, fastsmt, ini, cwd):
        self.lines = []
        self.port = None
        self.ready = threading.Event()
        self.proc = subprocess.Popen(
            [fastsmt, "-f", ini, "--server", "--server-port", "0", "--server-host", "127.0.0.1"],
            cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            text=True)
        self.listening = threading.Event()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stderr:
            self.lines.append(line.rstrip("\n"))
            m = re.match(r"fastsmt: server listening on port (\d+)$", line.strip())
            if m:
                self.port = int(m.group(1))
                self.listening.set()
            elif line.strip() == "fastsmt: server ready":
                self.ready.set()
        self.listening.set()
        self.ready.set()

    def wait_ready(self):
        deadline = time.monotonic() + TIMEOUT_S
        if not self.ready.wait(TIMEOUT_S) or self.proc.poll() is not None or self.port is None:
            self.stop()
            fail("the server did not report 'listening on port N' and 'server ready' within %d s "
                 "(exit %s); its stderr:\n%s" % (TIMEOUT_S, self.proc.returncode, "\n".join(self.lines)))
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(self.url("/health"), timeout=5) as r:
                    if r.status == 200:
                        return
            except OSError:
                pass
            time.sleep(0.1)
        fail("GET /health did not answer 200 after 'server ready'")

    def url(self, path):
        return "http://127.0.0.1:%d%s" % (self.port, path)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


class Chromium:
    """Headless Chromium with the DevTools protocol on fds 3 (commands in) and 4 (messages out),
    each message one JSON text ended by a NUL byte."""

    def __init__(self, binary, profile):
        to_child, self._w = os.pipe()
        self._r, from_child = os.pipe()
        # fds from 10 on (never 3 or 4, whatever the test inherited), which bash moves onto 3 and 4
        cin = fcntl.fcntl(to_child, fcntl.F_DUPFD_CLOEXEC, 10)
        cout = fcntl.fcntl(from_child, fcntl.F_DUPFD_CLOEXEC, 10)
        os.close(to_child)
        os.close(from_child)
        args = ["--headless", "--remote-debugging-pipe", "--user-data-dir=" + profile,
                "--no-first-run", "--no-default-browser-check", "--disable-gpu",
                "--disable-dev-shm-usage", "--disable-extensions", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--metrics-recording-only",
                "--mute-audio", "about:blank"]
        if os.geteuid() == 0:
            args.insert(0, "--no-sandbox")  # Chromium refuses to run as root with its sandbox
        self.log = tempfile.TemporaryFile(mode="w+")
        self.proc = subprocess.Popen(
            [shutil.which("bash") or "/bin/bash", "-c",
             'exec "$0" "$@" 3<&%d 4>&%d %d<&- %d>&-' % (cin, cout, cin, cout), binary]
            + args, pass_fds=(cin, cout), stdin=subprocess.DEVNULL, stdout=self.log,
            stderr=subprocess.STDOUT)
        os.close(cin)
        os.close(cout)
        self._next = 0
        self._replies = {}
        self._cond = threading.Condition()
        self.events = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        buf = b""
        while True:
            chunk = os.read(self._r, 65536)
            if not chunk:
                break
            buf += chunk
            while b"\0" in buf:
                raw, buf = buf.split(b"\0", 1)
                msg = json.loads(raw)
                if "id" in msg:
                    with self._cond:
                        self._replies[msg["id"]] = msg
                        self._cond.notify_all()
                else:
                    self.events.put(msg)
        with self._cond:
            self._replies[None] = {"error": {"message": "Chromium closed its pipe"}}
            self._cond.notify_all()

    def send(self, method, params=None, session=None):
        self._next += 1
        msg = {"id": self._next, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self._w, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + TIMEOUT_S
        with self._cond:
            while self._next not in self._replies and None not in self._replies:
                left = deadline - time.monotonic()
                if left <= 0:
                    fail("Chromium did not answer %s within %d s" % (method, TIMEOUT_S))
                self._cond.wait(left)
            reply = self._replies.pop(self._next, None) or self._replies[None]
        if "error" in reply:
            fail("Chromium: %s: %s\n%s" % (method, reply["error"].get("message"), self.output()))
        return reply.get("result", {})

    def output(self):
        self.log.seek(0)
        return self.log.read()[-4000:]

    def close(self):
        try:
            os.write(self._w, json.dumps({"id": 0, "method": "Browser.close"}).encode() + b"\0")
        except OSError:
            pass
        try:
            self.proc.wait(15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._w)


class Page:
    """One tab: evaluate JavaScript, type, click."""

    def __init__(self, browser, url):
        self.b = browser
        target = browser.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.s = browser.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        self.call("Page.enable")
        self.call("Runtime.enable")
        self.call("Page.navigate", {"url": url})
        self.wait_for("document.readyState === 'complete' && !!document.getElementById('go')",
                      "the page to load")

    def call(self, method, params=None):
        return self.b.send(method, params, self.s)

    def js(self, expr):
        r = self.call("Runtime.evaluate", {"expression": expr, "returnByValue": True})
        if "exceptionDetails" in r:
            fail("JavaScript %r threw: %s" % (expr, r["exceptionDetails"].get("text")))
        return r["result"].get("value")

    def wait_for(self, expr, what):
        deadline = time.monotonic() + TIMEOUT_S
        while time.monotonic() < deadline:
            if self.js(expr):
                return
            time.sleep(0.05)
        fail("timed out waiting for %s (status: %r)" % (what, self.js(
            "(document.getElementById('status')||{}).textContent")))

    def type_into(self, element_id, text):
        self.js("document.getElementById(%s).focus()" % json.dumps(element_id))
        self.call("Input.insertText", {"text": text})

    def click(self, element_id):
        box = self.js("(function(){var r=document.getElementById(%s).getBoundingClientRect();"
                      "return [r.left + r.width / 2, r.top + r.height / 2];})()" % json.dumps(element_id))
        for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
            self.call("Input.dispatchMouseEvent", {"type": kind, "x": box[0], "y": box[1],
                                                   "button": "left", "clickCount": 1})

    def exceptions(self):
        found = []
        while True:
            try:
                ev = self.b.events.get_nowait()
            except queue.Empty:
                return found
            if ev.get("method") == "Runtime.exceptionThrown":
                found.append(ev["params"]["exceptionDetails"].get("text"))


def main():
    if len(sys.argv) != 3:
        print(__doc__.split("\n")[6], file=sys.stderr)
        return 2
    fastsmt, source = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    chromium = find_chromium()
    if not chromium:
        print("server page test skipped: no Chromium (tools/install-deps.sh --tests installs chromium)")
        if os.environ.get("FASTSMT_REQUIRE_CHROMIUM", "0") not in ("", "0"):
            print("FASTSMT_REQUIRE_CHROMIUM is set: a failure")
            return 1
        return SKIP

    sample = os.path.join(source, "examples", "sample")
    ini = os.path.join(sample, "moses.ini")
    with open(os.path.join(sample, "sample.es"), encoding="utf-8") as f:
        sentence = f.read().split("\n")[2].strip()  # a sentence whose phrases are reordered
    cli = subprocess.run([fastsmt, "-f", ini, "-v", "0"], input=sentence + "\n",
                         capture_output=True, text=True, timeout=TIMEOUT_S)
    if cli.returncode != 0:
        fail("fastsmt -f %s exited %d: %s" % (ini, cli.returncode, cli.stderr))
    expected = cli.stdout.strip()
    if not expected:
        fail("fastsmt printed no translation for %r" % sentence)

    work = tempfile.mkdtemp(prefix="fastsmt-page-")
    server = Server(fastsmt, ini, work)
    browser = None
    try:
        server.wait_ready()
        with urllib.request.urlopen(server.url("/"), timeout=30) as r:
            served = r.read()
            ctype = r.headers.get("Content-Type", "")
        with open(os.path.join(source, "server", "page.html"), "rb") as f:
            if served != f.read():
                fail("GET / does not serve server/page.html as it is in the source tree")
        if not ctype.startswith("text/html"):
            fail("GET / has Content-Type %r, not text/html" % ctype)
        text = served.decode("utf-8")
        if re.search(r"<(link|img|iframe|object|embed)\b|<[^>]*\ssrc\s*=|\burl\s*\(|https?:|@import", text):
            fail("the page refers to an outside asset")

        browser = Chromium(chromium, os.path.join(work, "profile"))
        page = Page(browser, server.url("/"))

        # an empty text: the page says so in #status and sends nothing
        page.click("go")
        page.wait_for("document.getElementById('status').classList.contains('error')",
                      "the empty-text error in #status")

        page.type_into("src", sentence)
        if page.js("document.getElementById('src').value") != sentence:
            fail("typing into #src did not give the sentence")
        page.click("go")
        page.wait_for("document.getElementById('out').textContent !== '' || "
                      "document.getElementById('status').classList.contains('error')",
                      "the translation in #out")
        status = page.js("document.getElementById('status').textContent")
        got = page.js("document.getElementById('out').textContent")
        if status:
            fail("#status shows %r after translating (#out %r)" % (status, got))
        if got != expected:
            fail("the page shows\n  %r\nfastsmt -f %s prints\n  %r" % (got, ini, expected))

        rows = page.js("Array.from(document.querySelectorAll('#nbest tbody tr')).map("
                       "function(r){return Array.from(r.cells).map(function(c){return c.textContent;});})")
        if not rows or len(rows) > 10:
            fail("the n-best table has %d rows, not 1 to 10" % len(rows or []))
        if rows[0][1] != expected:
            fail("the n-best list's first entry %r is not the translation %r" % (rows[0][1], expected))
        scores = [float(r[2]) for r in rows]
        if scores != sorted(scores, reverse=True):
            fail("the n-best scores are not best first: %r" % scores)
        if any("LM0=" not in r[3] for r in rows):
            fail("an n-best row has no feature values (add-score-breakdown): %r" % rows)

        # the phrase alignment: its target phrases make the translation, its source spans the sentence
        phrases = page.js("Array.from(document.querySelectorAll('#align li')).map(function(li){"
                          "return [li.childNodes[0].textContent.trim(), li.childNodes[1].textContent];})")
        if not phrases:
            fail("the page shows no phrase alignment")
        if " ".join(p[1] for p in phrases if p[1] != "\u2205") != expected:
            fail("the alignment's target phrases %r do not make the translation" % phrases)
        if sorted(" ".join(p[0] for p in phrases).split()) != sorted(sentence.split()):
            fail("the alignment's source phrases %r do not cover the sentence" % phrases)

        thrown = page.exceptions()
        if thrown:
            fail("the page threw: %r" % thrown)
        print("page_test: the page shows %r, as fastsmt prints; %d n-best rows, %d phrases"
              % (got, len(rows), len(phrases)))
        return 0
    finally:
        if browser:
            browser.close()
        server.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
