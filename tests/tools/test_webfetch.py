from __future__ import annotations

import contextlib
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from dm_cc.tools.webfetch import MAX_BYTES, WebFetchTool, follows

from .helpers import call, derive

TOOL = WebFetchTool()

PAGE = b"""<!doctype html><html><head><title>T</title><style>p{color:red}</style>
<script>alert("no")</script></head><body>
<h1>Title</h1><p>Some <b>bold</b> and <em>soft</em> text with a <a href="/next">link</a>.</p>
<ul><li>one</li><li>two<ul><li>nested</li></ul></li></ul>
<pre>code  block
  indented</pre><p>Inline <code>x = 1</code>&amp; more.</p></body></html>"""


class Handler(BaseHTTPRequestHandler):
    routes = {
        "/page": (200, "text/html; charset=utf-8", PAGE),
        "/data.json": (200, "application/json", b'{"a": 1}'),
        "/latin": (200, "text/plain; charset=iso-8859-1", "café".encode("latin-1")),
        "/image.png": (200, "image/png", b"\x89PNG\r\n\x1a\n\0\0\0"),
        "/huge-header": (200, "text/plain", b"small"),
    }

    def log_message(self, *args):
        pass

    def handle(self):
        # the client may give up first (the timeout test)
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            super().handle()

    def do_GET(self):
        path = self.path
        if path == "/slow":
            time.sleep(2)
        if path in ("/docs", "/away"):
            target = {"/docs": "/docs/", "/away": "/page"}[path]
            self.send_response(301)
            self.send_header("Location", target)
            self.end_headers()
            return
        if path == "/docs/":
            return self._send(200, "text/plain", b"docs index")
        if path == "/big":
            return self._send(200, "text/plain", b"x" * (MAX_BYTES + 1), length=False)
        if path == "/huge-header":
            self.send_response(200)
            self.send_header("Content-Length", str(MAX_BYTES * 2))
            self.end_headers()
            return
        status, kind, body = self.routes.get(path, (404, "text/html", b"<p>Nothing here</p>"))
        self._send(status, kind, body)

    def _send(self, status, kind, body, length=True):
        self.send_response(status)
        self.send_header("Content-Type", kind)
        if length:
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture(scope="module")
def server():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(autouse=True)
def no_proxy(monkeypatch):
    for name in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "all_proxy",
                 "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)


def test_html_becomes_markdown(server, ctx):
    out = call(TOOL, ctx, url=f"{server}/page")
    assert not out.is_error
    text = out.output
    assert text.startswith("# Title\n\nSome **bold** and _soft_ text with a "
                           f"[link]({server}/next).")
    assert "- one\n- two\n  - nested" in text
    assert "```\ncode  block\n  indented\n```" in text
    assert "Inline `x = 1`& more." in text
    assert "alert" not in text and "color" not in text
    assert out.display.startswith(f"Fetched {server}/page (text/html")


def test_text_and_html_formats(server, ctx):
    text = call(TOOL, ctx, url=f"{server}/page", format="text").output
    assert text.startswith("Title\n\nSome bold and soft text with a link.")
    assert "**" not in text and "](" not in text
    assert call(TOOL, ctx, url=f"{server}/page", format="html").output == PAGE.decode()


def test_text_types_are_returned_as_they_are(server, ctx):
    assert call(TOOL, ctx, url=f"{server}/data.json").output == '{"a": 1}'
    assert call(TOOL, ctx, url=f"{server}/latin").output == "café"


def test_binary_content_is_an_error(server, ctx):
    out = call(TOOL, ctx, url=f"{server}/image.png")
    assert out.is_error and "binary content (image/png" in out.output


def test_http_errors_are_returned(server, ctx):
    out = call(TOOL, ctx, url=f"{server}/missing")
    assert out.is_error and out.output.startswith("HTTP 404") and "Nothing here" in out.output


def test_the_size_cap(server, ctx):
    big = call(TOOL, ctx, url=f"{server}/big")
    assert big.is_error and "5 MB limit" in big.output
    declared = call(TOOL, ctx, url=f"{server}/huge-header")
    assert declared.is_error and "over the 5 MB limit" in declared.output


def test_timeout(server, ctx):
    started = time.monotonic()
    out = call(TOOL, ctx, url=f"{server}/slow", timeout=1)
    assert out.is_error and "timed out after 1 s" in out.output
    assert time.monotonic() - started < 2


def test_redirects_to_the_same_path_are_followed_others_reported(server, ctx):
    assert call(TOOL, ctx, url=f"{server}/docs").output == "docs index"
    away = call(TOOL, ctx, url=f"{server}/away")
    assert not away.is_error
    assert f"redirects to {server}/page, which was not fetched" in away.output


def test_follows_only_same_host_and_path():
    assert follows("http://a.org/x", "https://a.org/x/")
    assert follows("https://A.org:443/x/", "https://a.org/x")
    assert not follows("https://a.org/x", "http://a.org/x")
    assert not follows("https://a.org/x", "https://b.org/x")
    assert not follows("https://a.org/x", "https://a.org/y")
    assert not follows("https://a.org/x", "file:///etc/passwd")


def test_non_http_urls_and_unreachable_hosts_are_errors(ctx):
    for url in ("ftp://example.com/x", "file:///etc/passwd", "not a url"):
        out = call(TOOL, ctx, url=url)
        assert out.is_error and "Not an http(s) URL" in out.output
    closed = call(TOOL, ctx, url="http://127.0.0.1:9/", timeout=2)
    assert closed.is_error and closed.output.startswith("Cannot fetch")


def test_requests_carry_the_canonical_url(ctx):
    assert derive(TOOL, ctx, url="HTTPS://Docs.Python.org:443/3/") == [
        ("webfetch", "https://docs.python.org/3/")]
