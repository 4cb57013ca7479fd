"""The managed layer's files: those in the managed directory, and those the
organisation delivers from a URL (docs/policies.md, "Managed policy from a URL").

The managed config (``<managed>/config.yaml``, written by the administrator like the
rest of ``/etc/dm_cc``) names each delivered file, where it is fetched from, and how a
copy is known to be the organisation's::

    managed_policy:
      files:
        enforced.yaml:
          url: https://policy.example.com/dm_cc/enforced.yaml
          sha256: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08
        policies/base.yaml:
          url: https://policy.example.com/dm_cc/base.yaml
          public_key: |          # ed25519; the signature is fetched from <url>.sig
            -----BEGIN PUBLIC KEY-----
            MCowBQYDK2VwAyEA…
            -----END PUBLIC KEY-----
      ca_file: /etc/dm_cc/org-ca.pem   # the CA of the server's certificate (else the system's)
      timeout: 3                        # seconds a start waits for the server, at most

Every start fetches them again (:func:`refresh`, all at once, within ``timeout``), and
a copy that verifies (its sha256 is one pinned, its signature is the key's, it is a
valid policy file) replaces the cached one. Whatever the fetch did, the layer is made
of the cached copies, each verified again as it is read: a copy that fails (the
server down, a 404, a wrong hash, a malformed file) leaves the last good one in force
and says so; a file of which no good copy exists stops the start (PolicyError naming
the managed config's line): dm_cc never runs without the organisation's policy.

The copies live in ``<state>/managed/`` (the same names, a ``.sig`` beside a signed
one, and a ``.json`` with where and when it was fetched and the last failure): dm_cc's
own per-user files, out of every tool's reach and hidden from the sandbox. The ``.json``
only informs; what is used is what verifies against the managed config, so a copy
changed by anyone is refused (and fetched again).
"""

from __future__ import annotations

import re
import time
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from dm_cc.config import (
    MANAGED_POLICY,
    display_path,
    line_of,
    load_yaml,
    locked,
    policy_files,
    replace_file,
    shared,
)
from dm_cc.errors import PolicyError, SettingsError
from dm_cc.policy.loader import PolicyFile, load_policy_file, parse_policy

if TYPE_CHECKING:  # ssl and urllib are loaded only when a file is fetched from a URL
    from dm_cc.policy.fetch import Fetched

KEY = MANAGED_POLICY         # the managed config's section
ENFORCED = "enforced.yaml"   # the managed enforced layer's file; the others are its base
BASE = "policy.yaml"
NAME = re.compile(r"(policy\.yaml|enforced\.yaml|policies/[A-Za-z0-9_][A-Za-z0-9_.-]*\.ya?ml)")
DEFAULT_TIMEOUT = 3.0        # seconds: a start waits this long for the server, at most
MOST_TIMEOUT = 60.0
SIGNED = "dm_cc managed policy {name}\n"   # what a signature covers, before the file's bytes
PINNED = "sha256 pinned"
SIGNED_BY = "signed: the managed config's ed25519 key"
NO_POLICY = ("dm_cc does not start without the organisation's policy (once the server "
             "answers, the next start fetches it; or ask whoever keeps the managed config)")


class Source(NamedTuple):
    """One delivered file as the managed config names it."""

    name: str                    # its name in the managed layer: enforced.yaml, policies/x.yaml
    url: str
    sha256: tuple[str, ...]      # the digests a copy may have (none: the key alone decides)
    public_key: Any = None       # an Ed25519PublicKey (cryptography), or None
    source: str = ""             # the managed config's file:line naming it

    @property
    def checks(self) -> str:
        """How a copy is known to be the organisation's, in words."""
        return " and ".join(c for c, on in ((PINNED, self.sha256), (SIGNED_BY, self.public_key))
                            if on)


class Delivery(NamedTuple):
    """The managed config's ``managed_policy:``."""

    sources: tuple[Source, ...]
    ca_file: Path | None = None
    timeout: float = DEFAULT_TIMEOUT


class Delivered(NamedTuple):
    """A delivered file in force: its cached copy, and where and when it came from."""

    name: str
    url: str
    copy: Path                   # the cached copy, as read and verified
    file: PolicyFile
    checks: str
    sha256: str
    fetched_at: str = "unknown"
    failure: str | None = None   # why the last fetch gave no good copy (its time: failed_at)
    failed_at: str | None = None
    note: str | None = None      # what else the last fetch found (a changed cached copy)

    def notices(self) -> list[str]:
        """What a start says about it: nothing when this start's fetch was good."""
        said = [f"managed policy {self.name}: {self.note}"] if self.note else []
        if self.failure:
            said.append(f"managed policy {self.name}: fetching {self.url} failed "
                        f"({self.failure}); the last good copy, fetched {self.fetched_at}, "
                        "is in force")
        return said

    def lines(self) -> list[str]:
        """Where it came from and when, for ``dm_cc policy show``."""
        said = [f"{self.name}: from {self.url} ({self.checks})",
                f"  copy: {self.copy}, fetched {self.fetched_at}, sha256 {self.sha256}"]
        if self.failure:
            said.append(f"  the last fetch ({self.failed_at}) failed: {self.failure}; "
                        f"the last good copy, fetched {self.fetched_at}, is in force")
        if self.note:
            said.append(f"  {self.note}")
        return said

    def as_json(self) -> dict[str, Any]:
        return {"name": self.name, "url": self.url, "copy": str(self.copy),
                "checks": self.checks, "sha256": self.sha256, "fetched_at": self.fetched_at,
                "failure": self.failure, "failed_at": self.failed_at, "note": self.note}


def load_managed(managed: Path, state: Path, *, refresh: bool = True
                 ) -> tuple[tuple[PolicyFile, ...], tuple[PolicyFile, ...], tuple[Delivered, ...]]:
    """The managed base files (``policy.yaml`` then ``policies/*`` by name, local and
    delivered together), the enforced file, and the delivered ones' provenance.
    ``refresh``: fetch the delivered ones first (a start does; a reload does not).
    PolicyError or SettingsError when a file is wrong or a delivered one has no good copy."""
    delivery = read_delivery(managed)
    cache = state / "managed"
    if delivery is not None and refresh:
        refresh_copies(delivery, cache)
    delivered = tuple(load_copy(source, cache, managed)
                      for source in (delivery.sources if delivery else ()))
    files = {path.relative_to(managed).as_posix(): load_policy_file(path)
             for path in policy_files(managed)}
    if (managed / ENFORCED).is_file():
        files[ENFORCED] = load_policy_file(managed / ENFORCED)
    files.update({d.name: d.file for d in delivered})
    base = tuple(files[name] for name in sorted(files, key=lambda n: (n != BASE, n))
                 if name != ENFORCED)
    return base, tuple(f for name, f in files.items() if name == ENFORCED), delivered


# ---------------------------------------------------------------------------- the config

def read_delivery(managed: Path) -> Delivery | None:
    """The managed config's ``managed_policy:``; None when it has none. SettingsError
    naming the line of anything wrong (a non-https URL, a file named twice …)."""
    path = managed / "config.yaml"
    if not path.is_file():
        return None
    shown = display_path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SettingsError(shown, None, f"cannot read settings file: {exc}") from None
    data, lines = load_yaml(text, shown, SettingsError)
    if not isinstance(data, dict) or data.get(KEY) is None:
        return None
    section = data[KEY]

    def wrong(where: tuple[Any, ...], why: str) -> SettingsError:
        return SettingsError(shown, line_of(lines, (KEY, *where)), why)

    if not isinstance(section, dict) or set(section) - {"files", "ca_file", "timeout"}:
        raise wrong((), f"{KEY}: is a mapping of files:, ca_file: and timeout:")
    files = section.get("files")
    if not isinstance(files, dict) or not files:
        raise wrong(("files",), f"{KEY}: files: maps each delivered file's name "
                    "(policy.yaml, enforced.yaml, policies/NAME.yaml) to its url: and "
                    "sha256: or public_key:")
    sources = tuple(_source(name, spec, managed, lambda why, n=name: wrong(("files", n), why),
                            f"{shown}:{line_of(lines, (KEY, 'files', name))}")
                    for name, spec in files.items())
    return Delivery(sources, _ca_file(section.get("ca_file"), managed, wrong),
                    _timeout(section.get("timeout", DEFAULT_TIMEOUT), wrong))


def _source(name: Any, spec: Any, managed: Path, wrong: Any, where: str) -> Source:
    if not isinstance(name, str) or not NAME.fullmatch(name):
        raise wrong(f"{name!r} is not a managed file's name: policy.yaml, enforced.yaml "
                    "or policies/NAME.yaml")
    if (managed / name).exists():
        raise wrong(f"{name} is delivered from a URL and is also a file in {managed}: "
                    "remove one (which of two would be the organisation's?)")
    if not isinstance(spec, dict) or set(spec) - {"url", "sha256", "public_key"}:
        raise wrong(f"{name}: is a mapping of url:, sha256: and public_key:")
    url = spec.get("url")
    if not isinstance(url, str) or not url.startswith("https://") or len(url) <= 8:
        raise wrong(f"{name}: url: must be an https:// URL (over plain http anyone on the way "
                    f"could change the policy); got {url!r}")
    pins = spec.get("sha256") or ()
    pins = (pins,) if isinstance(pins, str) else pins
    if not isinstance(pins, (list, tuple)) or not all(
            isinstance(p, str) and re.fullmatch(r"[0-9a-fA-F]{64}", p) for p in pins):
        raise wrong(f"{name}: sha256: is a SHA-256 digest (64 hex digits) or a list of them")
    key = _public_key(spec.get("public_key"), name, wrong)
    if not pins and key is None:
        raise wrong(f"{name}: needs sha256: (the digest a copy must have) or public_key: (the "
                    "ed25519 key its signature must verify with): an unchecked copy is "
                    "not the organisation's")
    return Source(name, url, tuple(p.lower() for p in pins), key, where)


def _public_key(pem: Any, name: str, wrong: Any) -> Any:
    if pem is None:
        return None
    try:
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
        from cryptography.hazmat.primitives.serialization import load_pem_public_key
    except ImportError:
        raise wrong(f"{name}: public_key: needs the cryptography package to check signatures "
                    "(pip install cryptography), or pin sha256: instead") from None
    try:
        key = load_pem_public_key(pem.encode() if isinstance(pem, str) else b"")
    except ValueError as exc:
        raise wrong(f"{name}: public_key: is not a PEM public key ({exc})") from None
    if not isinstance(key, Ed25519PublicKey):
        raise wrong(f"{name}: public_key: must be an ed25519 key")
    return key


def _ca_file(value: Any, managed: Path, wrong: Any) -> Path | None:
    if value is None:
        return None
    path = managed / value if isinstance(value, str) else None
    if path is None or not path.is_file():
        raise wrong(("ca_file",), f"ca_file: {value!r} is not a file (a PEM bundle of the CA "
                    "certificates the policy server's certificate is checked against)")
    return path


def _timeout(value: Any, wrong: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) \
            or not 0 < value <= MOST_TIMEOUT:
        raise wrong(("timeout",), f"timeout: is the seconds a start waits for the server "
                    f"(more than 0, at most {MOST_TIMEOUT:g})")
    return float(value)


# ---------------------------------------------------------------------------- fetching

def refresh_copies(delivery: Delivery, cache: Path) -> None:
    """Fetch every delivered file (and each signed one's ``.sig``) within the timeout;
    each copy that verifies replaces the cached one, and each file's ``.json`` says how
    this fetch went."""
    from dm_cc.policy.fetch import fetch_all, tls_context  # lazily: urllib, ssl, only to fetch

    urls = [url for s in delivery.sources
            for url in ((s.url, s.url + ".sig") if s.public_key is not None else (s.url,))]
    got = {f.url: f for f in fetch_all(urls, tls_context(delivery.ca_file), delivery.timeout)}
    now = _now()
    try:
        with locked(cache / ".lock"):
            for source in delivery.sources:
                _settle(source, got[source.url], got.get(source.url + ".sig"), cache, now)
    except OSError as exc:
        raise PolicyError(display_path(cache), None, "cannot keep the copies of the managed "
                          f"policy: {exc}") from None


def _settle(source: Source, body: Fetched, signature: Fetched | None, cache: Path,
            now: str) -> None:
    """Keep a fetched copy that verifies; note the failure of one that does not."""
    copy = cache / source.name
    meta = _meta(copy)
    before = _problem(source, *_read_copy(copy)) if copy.exists() else None
    failure = body.failure
    if failure is None and signature is not None and signature.failure is not None:
        failure = f"{signature.url}: {signature.failure}"
    if failure is None:
        assert body.body is not None
        failure = _problem(source, body.body, signature.body if signature else None)
    if failure is not None:
        meta.update(failure=failure, failed_at=now, note=_changed(before))
        _write_meta(copy, meta)
        return
    assert body.body is not None
    copy.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    _write(copy, body.body)
    if signature is not None and signature.body is not None:
        _write(copy.with_name(copy.name + ".sig"), signature.body)
    note = before and f"the cached copy had changed since it was fetched ({before}); " \
                      "replaced by the one fetched now"
    _write_meta(copy, {"url": source.url, "fetched_at": now, "sha256": _digest(body.body),
                       "failure": None, "failed_at": None, "note": note})


def _changed(before: str | None) -> str | None:
    return before and f"the cached copy does not verify ({before})"


def _write_meta(copy: Path, meta: dict[str, Any]) -> None:
    import json  # only a delivery writes it: not paid by every start

    _write(copy.with_name(copy.name + ".json"), json.dumps(meta).encode())


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    replace_file(path, data)


# ---------------------------------------------------------------------------- using a copy

def load_copy(source: Source, cache: Path, managed: Path) -> Delivered:
    """The cached copy of ``source``, verified now; PolicyError (at the managed config's
    line naming it) when there is no good one."""
    copy = cache / source.name
    with shared(cache / ".lock"):
        meta = _meta(copy)
        body, signature = _read_copy(copy) if copy.exists() else (None, None)
    failure = meta.get("failure")
    if body is None:
        why = f"the fetch from {source.url} failed ({failure})" if failure \
            else f"it was never fetched from {source.url}"
        raise PolicyError(source.source, None, f"managed policy {source.name}: no good copy: "
                          f"{why}; {NO_POLICY}")
    file = _verified(source, body, signature, managed)
    if isinstance(file, str):
        fetch = f"; the last fetch failed too ({failure})" if failure else ""
        raise PolicyError(source.source, None, f"managed policy {source.name}: the cached copy "
                          f"{copy} does not verify ({file}: it was changed since it was "
                          "fetched, or the managed config no longer accepts it)"
                          f"{fetch}; {NO_POLICY}")
    return Delivered(source.name, source.url, copy, replace(file, location=str(copy)),
                     source.checks, _digest(body),
                     str(meta.get("fetched_at") or "unknown"), failure,
                     meta.get("failed_at"), meta.get("note"))


def _read_copy(copy: Path) -> tuple[bytes, bytes | None]:
    signature = copy.with_name(copy.name + ".sig")
    try:
        return copy.read_bytes(), signature.read_bytes() if signature.exists() else None
    except OSError as exc:
        raise PolicyError(display_path(copy), None, f"cannot read the cached managed policy: "
                          f"{exc}") from None


def _meta(copy: Path) -> dict[str, Any]:
    """The copy's ``.json`` (empty when missing or damaged: it only informs)."""
    import json  # only a delivered policy has one: not paid by every start

    try:
        meta = json.loads(copy.with_name(copy.name + ".json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return meta if isinstance(meta, dict) else {}


def _problem(source: Source, body: bytes, signature: bytes | None) -> str | None:
    """Why ``body`` is not a good copy of ``source``; None when it is."""
    verified = _verified(source, body, signature)
    return verified if isinstance(verified, str) else None


def _verified(source: Source, body: bytes, signature: bytes | None,
              managed: Path | None = None) -> PolicyFile | str:
    """``body`` as the policy file it is, when it is a good copy of ``source`` (its
    sha256 pinned, its signature the key's, a valid policy file); else why not.
    ``managed``: where a hook's relative program is found."""
    digest = _digest(body)
    if source.sha256 and digest not in source.sha256:
        pinned = "one of the pinned digests" if len(source.sha256) > 1 else "the pinned one"
        return f"its sha256 is {digest}, not {pinned}"
    if source.public_key is not None:
        if signature is None:
            return "it has no signature"
        if not _signed(source, body, signature):
            return "its signature does not verify with the managed config's public key"
    try:
        return parse_policy(body.decode("utf-8"), source.url, managed)
    except UnicodeDecodeError:
        return "it is not UTF-8 text"
    except PolicyError as exc:
        return f"it is not a valid policy file: {exc}"


def _signed(source: Source, body: bytes, signature: bytes) -> bool:
    """Whether ``signature`` (64 raw bytes, or their base64) is the key's over
    :data:`SIGNED` and ``body``."""
    import base64
    import binascii

    from cryptography.exceptions import InvalidSignature

    raw = signature
    if len(raw) != 64:
        try:
            raw = base64.b64decode(signature.strip(), validate=True)
        except (binascii.Error, ValueError):
            return False
    try:
        source.public_key.verify(raw, SIGNED.format(name=source.name).encode() + body)
    except (InvalidSignature, ValueError):
        return False
    return True


def _digest(body: bytes) -> str:
    import hashlib  # only a delivered policy is digested: not paid by every start

    return hashlib.sha256(body).hexdigest()


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
