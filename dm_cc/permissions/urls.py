"""URLs as they will be fetched, and the other readings a server or a client may make.

A webfetch rule is matched against URLs, so every spelling of one address must come
to the same text, or a deny for a host or a path could be met by another spelling:

* the host is lower-cased, percent-decoded, mapped to its IDNA A-label (stdlib IDNA
  2003), and a trailing dot dropped; an IPv4 address in any form the WHATWG URL
  parser and ``inet_aton`` both accept (``2130706433``, ``0x7f.1``, ``0177.0.0.1``,
  ``127.1``) becomes dotted decimal; an IPv4-mapped IPv6 address becomes its IPv4
  address; other IPv6 addresses their RFC 5952 form in brackets;
* ``user:password@`` and the default port are dropped;
* in the path, escapes of unreserved characters are decoded (``%61`` is ``a``,
  ``%2e`` is ``.``), other escapes upper-cased, dot segments removed: this is the
  URL that is fetched (:func:`canonical_url`).

A server may still read the path otherwise: decode ``%2F`` (and ``%5C``, ``\\``) into
a separator, merge ``//``, drop ``;params`` from segments (``..;/``), decode twice.
Those readings are further names of the same request (:attr:`UrlNames.readings`): a
deny on any of them denies, an allow must cover all of them. Other spellings of the
same host (its Unicode form; the other names of this machine for a loopback address)
and the path with its escapes decoded (``/caf%C3%A9`` as ``/café``) are
:attr:`UrlNames.spellings`, for deny rules only.

A URL that clients read differently (two ``@``, a backslash in the authority, an
IPv4-looking host that is not a valid address, an IDNA deviation character, a zone
id …) has no canonical form: :func:`url_names` returns the reason, and the request
can then be asked about or denied, never allowed.
"""

from __future__ import annotations

import ipaddress
import re
from typing import NamedTuple

# RFC 3986 2.3: escapes of these are decoded (they mean the same either way).
_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
# Characters kept as they are in a path or a query; anything else is percent-encoded.
_PATH_SAFE = _UNRESERVED | frozenset("!$&'()*+,;=:@/%")
_QUERY_SAFE = _PATH_SAFE | frozenset("?[]")
_ESCAPE = re.compile(r"%([0-9A-Fa-f]{2})")
_BAD_ESCAPE = re.compile(r"%(?![0-9A-Fa-f]{2})")
_HOST_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-")
# UTS 46 maps these differently from IDNA 2003 (transitional vs non-transitional).
_IDNA_DEVIATIONS = frozenset("\u00df\u03c2\u200c\u200d")
_DEFAULT_PORT = {"http": 80, "https": 443}
_LOOPBACK_NAMES = ("localhost", "127.0.0.1", "[::1]", "0.0.0.0")


class UrlNames(NamedTuple):
    """Every name a URL is judged under. ``url`` is the canonical URL (what is
    fetched); ``readings`` the other paths a server may read from it; ``spellings``
    the same URL with another spelling of its host, each with its own readings."""

    url: str
    readings: tuple[str, ...] = ()
    spellings: tuple[tuple[str, tuple[str, ...]], ...] = ()


def canonical_url(raw: str) -> str | None:
    """The URL as it will be fetched; None when it has no one reading."""
    names = url_names(raw)
    return None if isinstance(names, str) else names.url


def url_names(raw: str) -> UrlNames | str:
    """The names of ``raw`` (see the module docstring), or why it has none."""
    from urllib.parse import unquote, urlsplit  # lazily: only webfetch needs it

    text = raw.strip()
    if any(c.isspace() or ord(c) < 0x20 or ord(c) == 0x7F or 0xD800 <= ord(c) <= 0xDFFF
           for c in text):
        return "the URL holds spaces, control characters or lone surrogates"
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError as exc:
        return f"not a URL dm_cc can parse ({exc})"
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORT:
        return "not an http(s) URL"
    if not text[len(scheme) + 1:].startswith("//") or "\\" in parts.netloc:
        return "clients read the host of this URL differently (a backslash or a missing //)"
    if parts.netloc.count("@") > 1:
        return "clients read a host with more than one '@' differently"
    hosts = _hosts(parts.netloc.rpartition("@")[2], parts.hostname or "")
    if isinstance(hosts, str):
        return hosts
    path = parts.path or "/"
    if _BAD_ESCAPE.search(path):
        return "the path holds a '%' that is not an escape"
    suffix = "" if port is None or port == _DEFAULT_PORT[scheme] else f":{port}"
    query = f"?{_encode(parts.query, _QUERY_SAFE)}" if parts.query else ""
    escaped = _encode(_ESCAPE.sub(_unreserved, path), _PATH_SAFE)
    canonical = remove_dot_segments(escaped)
    served = _server_readings(escaped)
    paths = (canonical, *(p for p in dict.fromkeys(served) if p != canonical))

    def named(host: str) -> tuple[str, tuple[str, ...]]:
        urls = [f"{scheme}://{host}{suffix}{p}{query}" for p in paths]
        return urls[0], tuple(urls[1:])

    main, readings = named(hosts[0])
    spellings = [named(host) for host in hosts[1:]]
    plain = canonical
    for _ in range(3):  # decoded as often as a careless server might
        plain, before = unquote(plain, errors="replace"), plain
        if plain == before:
            break
    decoded = f"{scheme}://{hosts[0]}{suffix}{plain}{query}"
    if decoded != main:  # a rule written with the characters, not their escapes
        spellings.append((decoded, ()))
    return UrlNames(main, readings, tuple(spellings))


def remove_dot_segments(path: str) -> str:
    """RFC 3986 5.2.4, so ``/public/../secret`` is judged as ``/secret``."""
    segments = path.split("/")[1:]
    out: list[str] = []
    for segment in segments:
        if segment == "..":
            if out:
                out.pop()
        elif segment != ".":
            out.append(segment)
    if segments and segments[-1] in (".", ".."):
        out.append("")  # it names a directory
    return "/" + "/".join(out)


def _unreserved(match: re.Match[str]) -> str:
    char = chr(int(match.group(1), 16))
    return char if char in _UNRESERVED else match.group(0).upper()


def _encode(text: str, safe: frozenset[str]) -> str:
    return "".join(c if c in safe else "".join(f"%{b:02X}" for b in c.encode("utf-8"))
                   for c in text)


_DOUBLED = re.compile(r"%25(2[EF]|5C)", re.IGNORECASE)
_SEPARATOR = re.compile(r"%2F|%5C|\\", re.IGNORECASE)
_DOT = re.compile(r"%2E", re.IGNORECASE)


def _server_readings(path: str) -> list[str]:
    """The paths a server that decodes more than RFC 3986 says may read from the
    canonical ``path``: ``%2F``, ``%5C`` and ``\\`` as separators, escapes of those
    and of ``.`` decoded twice, ``;params`` dropped from segments (``..;/``), ``//``
    merged or not; dot segments removed after all that. Only what changes the
    segments counts: ``%20`` is the same file to every server."""
    for _ in range(3):  # double (and triple) encoding
        path, doubled = _DOUBLED.subn(r"%\1", path)
        if not doubled:
            break
    path = _SEPARATOR.sub("/", _DOT.sub(".", path))
    path = "/".join(segment.split(";", 1)[0] for segment in path.split("/"))
    merged = re.sub("/{2,}", "/", path)
    return [remove_dot_segments(path), remove_dot_segments(merged)]


# ------------------------------------------------------------------------ hosts

def _hosts(hostport: str, hostname: str) -> tuple[str, ...] | str:
    """The canonical host and its other spellings; or why it has none."""
    from urllib.parse import unquote

    if hostport.startswith("["):
        return _ipv6(hostname)
    try:
        host = unquote(hostname, errors="strict") if "%" in hostname else hostname
    except UnicodeDecodeError:
        return "the host's escapes are not UTF-8"
    if host.endswith("."):
        host = host[:-1]
    spellings: list[str] = []
    if not host.isascii():
        if _IDNA_DEVIATIONS & set(host.lower()):
            return "the host holds a character IDNA 2003 and UTS 46 map differently"
        try:
            host = host.encode("idna").decode("ascii").lower()
        except UnicodeError:
            return "the host is not a valid internationalised domain name"
    host = host.lower()
    labels = host.split(".")
    if not host or "" in labels or not all(set(label) <= _HOST_CHARS for label in labels):
        return "the host is not a plain host name or address"
    if _ends_in_a_number(labels):
        address = _ipv4(labels)
        if address is None:
            return "the host looks like an IPv4 address but is not one every client reads alike"
        return _with_loopback(address, address.startswith("127.") or address == "0.0.0.0")
    if any(label.startswith("xn--") for label in labels):
        try:
            unicode = host.encode("ascii").decode("idna")
            if unicode.encode("idna").decode("ascii") != host:
                raise UnicodeError(host)
        except UnicodeError:
            return "the host is not a valid internationalised domain name"
        spellings.append(unicode)
    loopback = host == "localhost" or host.endswith(".localhost")
    return _with_loopback(host, loopback, spellings)


def _with_loopback(host: str, loopback: bool, spellings: list[str] | None = None
                   ) -> tuple[str, ...]:
    """This machine has several names: a deny for one holds for every other."""
    names = [host, *(spellings or ())]
    if loopback:
        names += _LOOPBACK_NAMES
    return tuple(dict.fromkeys(names))


def _ends_in_a_number(labels: list[str]) -> bool:
    """The WHATWG URL standard's test: such a host is parsed as an IPv4 address."""
    last = labels[-1]
    return last.isdigit() or (last.startswith("0x") and all(c in "0123456789abcdef" for c in last[2:]))


def _ipv4_part(text: str) -> int | None:
    if text.startswith("0x"):
        digits, base = text[2:], 16
    elif len(text) > 1 and text.startswith("0"):
        digits, base = text[1:], 8
    else:
        digits, base = text, 10
    try:
        return int(digits, base) if digits and digits.isascii() and digits.isalnum() else None
    except ValueError:
        return None


def _ipv4(labels: list[str]) -> str | None:
    """An IPv4 address in the forms both the WHATWG parser and inet_aton accept
    (1 to 4 parts; decimal, 0x hex or 0 octal; the last part fills the rest)."""
    if len(labels) > 4:
        return None
    parts = [_ipv4_part(label) for label in labels]
    if any(part is None for part in parts):
        return None
    numbers = [part for part in parts if part is not None]
    if any(n > 255 for n in numbers[:-1]) or numbers[-1] >= 256 ** (5 - len(numbers)):
        return None
    value = numbers[-1]
    for i, n in enumerate(numbers[:-1]):
        value += n << (8 * (3 - i))
    return str(ipaddress.IPv4Address(value))


def _ipv6(hostname: str) -> tuple[str, ...] | str:
    if "%" in hostname:
        return "an IPv6 zone id names an interface, not a host"
    try:
        address = ipaddress.IPv6Address(hostname)
    except ValueError:
        return "the host is not a valid IPv6 address"
    mapped = address.ipv4_mapped
    if mapped is not None:
        return _hosts(str(mapped), str(mapped))
    packed = int(address)
    if packed >> 32 == 0 and packed > 1:
        return "an IPv4-compatible IPv6 address is read differently by different systems"
    host = f"[{address.compressed}]"
    embedded = [str(address.sixtofour)] if address.sixtofour is not None else []
    if packed >> 32 == 0x0064FF9B << 64:  # NAT64 64:ff9b::/96
        embedded.append(str(ipaddress.IPv4Address(packed & 0xFFFFFFFF)))
    loopback = address.is_loopback or address.is_unspecified
    return _with_loopback(host, loopback, embedded)
