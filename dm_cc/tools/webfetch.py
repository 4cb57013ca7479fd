"""webfetch: one http(s) URL, as markdown, plain text or raw HTML.

The request the permission engine judged names one URL, so a redirect is followed
only when it cannot change what a rule matched: to the same host and path (a
trailing slash, or http → https). Any other redirect is reported to the model,
which may fetch the new URL — a new request, judged again.
"""

from __future__ import annotations

import asyncio
import http.client
import re
import urllib.error
import urllib.request
from dataclasses import dataclass
from html.parser import HTMLParser
from typing import ClassVar, Literal
from urllib.parse import urljoin

from pydantic import BaseModel, Field

from dm_cc import __version__
from dm_cc.permissions import canonical_url
from dm_cc.tools.base import CatalogTool, ToolContext, ToolOutput

MAX_BYTES = 5 * 1024 * 1024
MAX_OUTPUT_CHARS = 100_000
MAX_REDIRECTS = 5
ACCEPT = {
    "markdown": "text/markdown;q=1.0, text/plain;q=0.9, text/html;q=0.8, */*;q=0.1",
    "text": "text/plain;q=1.0, text/markdown;q=0.9, text/html;q=0.8, */*;q=0.1",
    "html": "text/html;q=1.0, application/xhtml+xml;q=0.9, */*;q=0.1",
}
TEXT_TYPES = re.compile(r"^(text/|application/(json|xml|javascript|x-yaml|yaml|toml)\b|"
                        r"application/[\w.+-]*\+(json|xml))")


class WebFetchParams(BaseModel):
    url: str = Field(description="The http:// or https:// URL to fetch.")
    format: Literal["text", "markdown", "html"] = Field(
        default="markdown", description="How to return an HTML page: markdown (default), plain "
                                        "text, or the raw HTML.")
    timeout: int = Field(default=30, ge=1, le=120, description="Seconds to wait, at most 120.")


class WebFetchTool(CatalogTool[WebFetchParams]):
    name: ClassVar[str] = "webfetch"
    description: ClassVar[str] = (
        "Fetch an http(s) URL and return its content; HTML pages are converted to markdown or "
        "plain text (or kept as HTML). Text types (JSON, plain text …) are returned as they "
        f"are; binary content is an error. Responses over {MAX_BYTES // 2**20} MB are refused "
        f"and the output is cut at {MAX_OUTPUT_CHARS:,} characters. A redirect to another "
        "host or path is not followed: the new URL is reported so you can fetch it."
    )
    Params = WebFetchParams


    async def run(self, params: WebFetchParams, ctx: ToolContext) -> ToolOutput:
        url = canonical_url(params.url)
        if url is None:
            return ToolOutput(f"Not an http(s) URL: {params.url!r}", is_error=True)
        try:
            # Fetch exactly the URL the policy judged, not the raw spelling.
            page = await asyncio.to_thread(fetch, url, params.format,
                                           params.timeout)
            text = render(page, params.format)
        except _Redirected as moved:
            return ToolOutput(f"{params.url} redirects to {moved.location}, which was not "
                              "fetched: call webfetch with that URL to follow it.")
        except FetchError as exc:
            return ToolOutput(str(exc), is_error=True)
        if len(text) > MAX_OUTPUT_CHARS:
            text = (text[:MAX_OUTPUT_CHARS]
                    + f"\n\n(cut at {MAX_OUTPUT_CHARS:,} of {len(text):,} characters)")
        return ToolOutput(text, display=f"Fetched {page.url} ({page.content_type}, "
                                        f"{len(page.body):,} bytes)")


class FetchError(Exception):
    """The URL could not be fetched; the message is for the model."""


class _Redirected(Exception):
    def __init__(self, location: str) -> None:
        super().__init__(location)
        self.location = location


@dataclass(frozen=True, slots=True)
class Page:
    url: str
    content_type: str
    charset: str | None
    body: bytes


def follows(old: str, new: str) -> bool:
    """Whether a redirect from ``old`` to ``new`` keeps the host and path."""
    before, after = canonical_url(old), canonical_url(new)
    if before is None or after is None:
        return False
    scheme_before, _, rest_before = before.partition("://")
    scheme_after, _, rest_after = after.partition("://")
    same_scheme = scheme_after in (scheme_before, "https")
    return same_scheme and rest_before.rstrip("/") == rest_after.rstrip("/")


class _RedirectHandler(urllib.request.HTTPRedirectHandler):
    max_redirections = MAX_REDIRECTS

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        judged = canonical_url(newurl)
        if judged is None or not follows(req.full_url, newurl):
            fp.close()
            raise _Redirected(newurl)
        # Fetch the canonical spelling, the one a new request would have been judged as.
        return super().redirect_request(req, fp, code, msg, headers, judged)


def fetch(url: str, format: str, timeout: float) -> Page:
    """GET ``url`` (blocking; run it in a thread). Raises FetchError or _Redirected."""
    headers = {"User-Agent": f"dm_cc/{__version__}", "Accept": ACCEPT[format]}
    opener = urllib.request.build_opener(_RedirectHandler)
    try:
        request = urllib.request.Request(url, headers=headers)
        with opener.open(request, timeout=timeout) as response:
            length = response.headers.get("Content-Length")
            if length and length.isdigit() and int(length) > MAX_BYTES:
                raise FetchError(f"{url}: the response is {int(length):,} bytes, over the "
                                 f"{MAX_BYTES // 2**20} MB limit.")
            body = response.read(MAX_BYTES + 1)
            if len(body) > MAX_BYTES:
                raise FetchError(f"{url}: the response is over the {MAX_BYTES // 2**20} MB "
                                 "limit.")
            return Page(response.geturl(), response.headers.get_content_type(),
                        response.headers.get_content_charset(), body)
    except urllib.error.HTTPError as exc:
        try:
            detail = exc.read(2000).decode("utf-8", errors="replace")
        except (OSError, ValueError, http.client.HTTPException):
            detail = ""
        detail = re.sub(r"\s+", " ", _HTMLToText(markdown=False, base=url).convert(detail))
        message = f"HTTP {exc.code} {exc.reason} for {url}"
        raise FetchError(message + (f": {detail[:500]}" if detail else "")) from exc
    except urllib.error.URLError as exc:
        reason = exc.reason
        if isinstance(reason, TimeoutError):
            raise FetchError(f"{url}: timed out after {timeout:g} s") from exc
        raise FetchError(f"Cannot fetch {url}: {reason}") from exc
    except TimeoutError as exc:
        raise FetchError(f"{url}: timed out after {timeout:g} s") from exc
    except (OSError, ValueError, http.client.HTTPException) as exc:  # reset, bad status …
        raise FetchError(f"Cannot fetch {url}: {exc}") from exc


def render(page: Page, format: str) -> str:
    """The body as text for the model, converted from HTML unless ``format`` is html.
    Raises FetchError for binary content."""
    is_html = page.content_type in ("text/html", "application/xhtml+xml")
    textual = is_html or TEXT_TYPES.match(page.content_type)
    if not textual and b"\0" in page.body[:8192]:
        raise FetchError(f"{page.url} is binary content ({page.content_type}, "
                         f"{len(page.body):,} bytes) that webfetch cannot show.")
    try:
        text = page.body.decode(page.charset or "utf-8", errors="replace")
    except LookupError:     # a charset Python does not know
        text = page.body.decode("utf-8", errors="replace")
    if is_html and format != "html":
        return _HTMLToText(markdown=format == "markdown", base=page.url).convert(text)
    return text


class _HTMLToText(HTMLParser):
    """A crude HTML → markdown / plain-text converter: headings, paragraphs, lists,
    links, emphasis, code and preformatted blocks; scripts, styles and <head> dropped."""

    SKIP = frozenset({"script", "style", "noscript", "template", "svg", "head", "iframe",
                      "object", "canvas"})
    BLOCK = frozenset({"p", "div", "section", "article", "header", "footer", "main", "nav",
                       "aside", "table", "ul", "ol", "dl", "blockquote", "form", "figure",
                       "figcaption", "details", "summary", "address", "dt", "dd"})
    EMPHASIS = {"strong": "**", "b": "**", "em": "_", "i": "_"}

    def __init__(self, *, markdown: bool, base: str) -> None:
        super().__init__(convert_charrefs=True)
        self.markdown, self.base = markdown, base
        self.out: list[str] = []
        self.skip = 0
        self.pre = 0
        self.lists: list[str] = []
        self.links: list[tuple[int, str]] = []

    def convert(self, html: str) -> str:
        self.feed(html)
        self.close()
        text = "".join(self.out)
        text = re.sub(r"[ \t]+\n", "\n", text)
        return re.sub(r"\n{3,}", "\n\n", text).strip()

    def _emit(self, text: str) -> None:
        if not self.skip:
            self.out.append(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attr = dict(attrs)
        if tag == "body":
            self.skip = 0     # an unclosed <head> ends where the body starts
        if tag in self.SKIP:
            self.skip += 1
        elif re.fullmatch(r"h[1-6]", tag):
            self._emit("\n\n" + ("#" * int(tag[1]) + " " if self.markdown else ""))
        elif tag in ("ul", "ol"):
            if not self.lists:
                self._emit("\n\n")
            self.lists.append(tag)
        elif tag in self.BLOCK:
            self._emit("\n\n")
        elif tag == "li":
            depth = max(len(self.lists) - 1, 0)
            self._emit("\n" + "  " * depth + "- ")
        elif tag in ("br", "tr"):
            self._emit("\n")
        elif tag in ("td", "th"):
            self._emit(" | ")
        elif tag == "hr":
            self._emit("\n\n---\n\n")
        elif tag == "pre":
            self.pre += 1
            self._emit("\n\n```\n" if self.markdown else "\n\n")
        elif self.markdown and tag == "code" and not self.pre:
            self._emit("`")
        elif self.markdown and tag in self.EMPHASIS:
            self._emit(self.EMPHASIS[tag])
        elif self.markdown and tag == "a" and attr.get("href"):
            self.links.append((len(self.out), urljoin(self.base, attr["href"] or "")))
        elif self.markdown and tag == "img" and attr.get("alt"):
            self._emit(f"![{attr['alt']}]({urljoin(self.base, attr.get('src') or '')})")

    def handle_endtag(self, tag: str) -> None:
        if tag in self.SKIP:
            self.skip = max(self.skip - 1, 0)
        elif tag in ("ul", "ol"):
            if self.lists:
                self.lists.pop()
            if not self.lists:
                self._emit("\n\n")
        elif re.fullmatch(r"h[1-6]", tag) or tag in self.BLOCK:
            self._emit("\n\n")
        elif tag == "pre":
            self.pre = max(self.pre - 1, 0)
            self._emit("\n```\n\n" if self.markdown else "\n\n")
        elif self.markdown and tag == "code" and not self.pre:
            self._emit("`")
        elif self.markdown and tag in self.EMPHASIS:
            self._emit(self.EMPHASIS[tag])
        elif self.markdown and tag == "a" and self.links:
            start, href = self.links.pop()
            label = "".join(self.out[start:]).strip()
            del self.out[start:]
            self._emit(f"[{label}]({href})" if label else "")

    def handle_data(self, data: str) -> None:
        if self.pre:
            self._emit(data)
            return
        data = re.sub(r"\s+", " ", data)
        if self._at_line_start():
            data = data.lstrip(" ")
        self._emit(data)

    def _at_line_start(self) -> bool:
        for chunk in reversed(self.out):
            if chunk:
                return chunk.endswith("\n") or chunk.endswith("- ")
        return True
