"""Fetching managed policy files over HTTPS, every one within one deadline
(:mod:`dm_cc.policy.delivery` decides what a fetched copy is worth).

Only ``https://`` is fetched, a redirect only to another ``https://`` address, the
server's certificate always verified (against the organisation's CA bundle when the
managed config names one, else the system's: ``SSL_CERT_FILE`` and the default
paths). A body over :data:`MOST_BYTES` is refused. Each URL is fetched on a daemon
thread: a server that does not answer by the deadline is given up on (the thread is
abandoned, and never holds the process's exit).
"""

from __future__ import annotations

import ssl
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from http.client import HTTPMessage
from pathlib import Path
from typing import IO, BinaryIO, NamedTuple
from urllib.parse import urlsplit

MOST_BYTES = 1 << 20    # a policy file is a few kilobytes; a megabyte is a mistake or worse
CHUNK = 64 * 1024
LINGER = 1.0            # seconds an abandoned fetch may go on past the deadline


class Fetched(NamedTuple):
    """What one URL gave: its body, or why there is none (``failure``)."""

    url: str
    body: bytes | None = None
    failure: str | None = None


class _HttpsOnly(urllib.request.HTTPRedirectHandler):
    """Follows a redirect to ``https://`` only: a plain-http hop would let anyone on the
    way change the policy."""

    def redirect_request(self, req: urllib.request.Request, fp: IO[bytes], code: int,
                         msg: str, headers: HTTPMessage, newurl: str
                         ) -> urllib.request.Request | None:
        if urlsplit(newurl).scheme != "https":
            raise urllib.error.URLError(f"redirected to {newurl}, which is not https://")
        return super().redirect_request(req, fp, code, msg, headers, newurl)


def tls_context(ca_file: Path | None) -> ssl.SSLContext:
    """Verifying TLS: the CA bundle ``ca_file`` alone when given, else the system's."""
    return ssl.create_default_context(cafile=str(ca_file) if ca_file else None)


def fetch_all(urls: Sequence[str], context: ssl.SSLContext, timeout: float) -> list[Fetched]:
    """Each URL's body or failure, all fetched at once and given ``timeout`` seconds in
    all (one not done by then: ``no answer within …``)."""
    deadline = time.monotonic() + timeout
    results: dict[str, Fetched] = {}
    threads = [threading.Thread(target=_into, args=(results, url, context, deadline),
                                name="dm_cc-managed-fetch", daemon=True)
               for url in dict.fromkeys(urls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))
    late = Fetched("", failure=f"no answer within {timeout:g} s")
    return [results.get(url, late._replace(url=url)) for url in urls]


def _into(results: dict[str, Fetched], url: str, context: ssl.SSLContext,
          deadline: float) -> None:
    results[url] = fetch(url, context, deadline)


def fetch(url: str, context: ssl.SSLContext, deadline: float) -> Fetched:
    """``url``'s body, read by the monotonic ``deadline``; or why not."""
    if urlsplit(url).scheme != "https":
        return Fetched(url, failure="not an https:// URL")
    opener = urllib.request.build_opener(urllib.request.HTTPSHandler(context=context),
                                         _HttpsOnly())
    request = urllib.request.Request(url, headers={"User-Agent": "dm_cc managed policy"})
    try:
        # the socket's own timeout a little after the deadline: past it, fetch_all has
        # said "no answer" already, and this thread only has to end
        with opener.open(request, timeout=max(0.1, deadline - time.monotonic() + LINGER)) as answer:
            return Fetched(url, body=_read(answer, deadline))
    except urllib.error.HTTPError as exc:
        return Fetched(url, failure=f"HTTP {exc.code} {exc.reason}")
    except urllib.error.URLError as exc:
        return Fetched(url, failure=_why(exc.reason))
    except (OSError, ValueError) as exc:   # ssl.SSLError and TimeoutError are OSErrors
        return Fetched(url, failure=_why(exc))


def _why(reason: object) -> str:
    """``connection refused``, not ``[Errno 111] Connection refused``."""
    if isinstance(reason, OSError) and not isinstance(reason, ssl.SSLError) and reason.strerror:
        return reason.strerror.lower()
    return str(reason) or type(reason).__name__


def _read(answer: BinaryIO, deadline: float) -> bytes:
    """The whole body by ``deadline``, at most :data:`MOST_BYTES` (ValueError else)."""
    body = bytearray()
    while chunk := answer.read(CHUNK):
        body += chunk
        if len(body) > MOST_BYTES:
            raise ValueError(f"more than {MOST_BYTES} bytes: not a policy file")
        if time.monotonic() > deadline:
            raise TimeoutError("the body did not arrive in time")
    return bytes(body)
