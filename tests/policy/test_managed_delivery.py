"""The managed policy delivered from a URL (dm_cc/policy/managed.py, docs/policies.md
"Managed policy from a URL"), against a real loopback HTTPS server with a self-signed
certificate that the managed config names as its ``ca_file``."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
from pathlib import Path

import pytest
from support.https_server import PolicyServer, sha256

from dm_cc.config import load_settings, state_dir
from dm_cc.errors import PolicyError, SettingsError
from dm_cc.policy import load_policy
from dm_cc.policy.managed import SIGNED

ENFORCED = b"""rules:
  - {permission: bash, pattern: "git push *", action: deny, reason: "org: people push"}
"""
NEWER = ENFORCED + b"""  - {permission: bash, pattern: "curl *", action: deny, reason: "org: no curl"}
"""
BASE = b"""rules:
  - {permission: bash, pattern: "make *", action: ask}
"""


@pytest.fixture
def server():
    served = PolicyServer().start()
    yield served
    served.stop()


@pytest.fixture
def managed(project) -> Path:
    path = Path(os.environ["DM_CC_MANAGED_DIR"])
    path.mkdir(parents=True)
    return path


def configure(managed: Path, server: PolicyServer, files: dict[str, dict], **section) -> Path:
    """The managed config naming ``files`` (name -> url:, sha256: …) on ``server``."""
    section.setdefault("ca_file", str(server.cert.cert))
    lines = ["sandbox: auto", "managed_policy:"]
    lines += [f"  {key}: {json.dumps(value)}" for key, value in section.items()
              if value is not None]
    lines.append("  files:")
    for name, spec in files.items():
        lines.append(f"    {name}:")
        lines += [f"      {key}: {json.dumps(value)}" for key, value in spec.items()]
    config = managed / "config.yaml"
    config.write_text("\n".join(lines) + "\n")
    return config


def pinned(server: PolicyServer, name: str, *bodies: bytes) -> dict:
    return {"url": server.url(name), "sha256": [sha256(b) for b in bodies]}


def load(project: Path, **kwargs):
    return load_policy(project, project.parent / "home", os.environ, **kwargs)


def denies(policy, pattern: str) -> list[str]:
    return [r.source for f in policy.enforced for r in f.rules if r.pattern == pattern]


def copy_of(name: str) -> Path:
    return state_dir() / "managed" / name


def test_first_fetch_is_cached_and_used_then_the_last_good_copy_when_the_server_is_down(
        project, managed, server):
    server.files["enforced.yaml"] = ENFORCED
    server.files["base.yaml"] = BASE
    configure(managed, server, {"enforced.yaml": pinned(server, "enforced.yaml", ENFORCED),
                                "policies/base.yaml": pinned(server, "base.yaml", BASE)})
    policy = load(project)
    assert denies(policy, "git push *") == [server.url("enforced.yaml") + ":2"]
    assert [r.pattern for f in policy.managed for r in f.rules] == ["make *"]
    assert copy_of("enforced.yaml").read_bytes() == ENFORCED
    first = {d.name: d for d in policy.delivered}
    assert first["enforced.yaml"].failure is None and first["enforced.yaml"].notices() == []
    assert first["enforced.yaml"].sha256 == sha256(ENFORCED)
    assert policy.managed_origins()[0] == (f"enforced.yaml: from {server.url('enforced.yaml')} "
                                           "(sha256 pinned)")

    server.stop()
    policy = load(project)
    assert denies(policy, "git push *") == [server.url("enforced.yaml") + ":2"]
    (enforced,) = [d for d in policy.delivered if d.name == "enforced.yaml"]
    assert enforced.failure == "connection refused"
    assert enforced.fetched_at == first["enforced.yaml"].fetched_at
    assert enforced.notices() == [
        f"managed policy enforced.yaml: fetching {server.url('enforced.yaml')} failed "
        f"(connection refused); the last good copy, fetched {enforced.fetched_at}, is in force"]
    assert any("the last fetch" in line and "failed: connection refused" in line
               for line in policy.managed_origins())


def test_a_copy_of_the_wrong_hash_or_malformed_is_refused_and_the_last_good_one_kept(
        project, managed, server):
    server.files["enforced.yaml"] = ENFORCED
    configure(managed, server, {"enforced.yaml": pinned(server, "enforced.yaml", ENFORCED)})
    load(project)
    server.files["enforced.yaml"] = NEWER          # changed on the server, not pinned
    policy = load(project)
    assert denies(policy, "curl *") == [] and denies(policy, "git push *")
    (delivered,) = policy.delivered
    assert delivered.failure == f"its sha256 is {sha256(NEWER)}, not the pinned one"
    assert copy_of("enforced.yaml").read_bytes() == ENFORCED

    malformed = b"rules:\n  - {permission: bash, pattern: 'x', action: maybe}\n"
    server.files["enforced.yaml"] = malformed
    configure(managed, server, {"enforced.yaml": pinned(server, "enforced.yaml",
                                                        malformed, ENFORCED)})
    (delivered,) = load(project).delivered
    assert delivered.failure.startswith("it is not a valid policy file: "
                                        f"{server.url('enforced.yaml')}:2")

    server.files["enforced.yaml"] = NEWER          # the new one pinned beside the old: taken
    configure(managed, server, {"enforced.yaml": pinned(server, "enforced.yaml",
                                                        NEWER, ENFORCED)})
    policy = load(project)
    assert denies(policy, "curl *") and policy.delivered[0].failure is None


def test_no_good_copy_ever_refuses_to_start(project, managed, server):
    config = configure(managed, server, {"enforced.yaml": pinned(server, "enforced.yaml",
                                                                 ENFORCED)})
    with pytest.raises(PolicyError) as raised:      # a 404: nothing was ever fetched
        load(project)
    assert raised.value.path == f"{config}:5"
    assert "managed policy enforced.yaml: no good copy: the fetch from " \
           f"{server.url('enforced.yaml')} failed (HTTP 404 Not Found)" in str(raised.value)
    assert "dm_cc does not start without the organisation's policy" in str(raised.value)
    server.files["enforced.yaml"] = ENFORCED
    assert denies(load(project), "git push *")      # the next start fetches it


def test_a_changed_cached_copy_is_never_used(project, managed, server):
    server.files["enforced.yaml"] = ENFORCED
    configure(managed, server, {"enforced.yaml": pinned(server, "enforced.yaml", ENFORCED)})
    load(project)
    copy_of("enforced.yaml").write_bytes(b"rules: []\n")   # the org's denies dropped
    policy = load(project)                                 # the server up: fetched again
    assert denies(policy, "git push *")
    (delivered,) = policy.delivered
    assert delivered.note.startswith("the cached copy had changed since it was fetched "
                                     "(its sha256 is ")
    assert delivered.notices() == [f"managed policy enforced.yaml: {delivered.note}"]
    assert copy_of("enforced.yaml").read_bytes() == ENFORCED

    copy_of("enforced.yaml").write_bytes(b"rules: []\n")
    server.stop()
    with pytest.raises(PolicyError, match="the cached copy .* does not verify .*the last fetch "
                       "failed too .connection refused."):
        load(project)
    with pytest.raises(PolicyError, match="does not verify"):
        load(project, refresh=False)                       # a reload checks it too


def test_the_managed_config_refuses_what_would_be_unchecked(project, managed, server):
    config = configure(managed, server, {"enforced.yaml": {
        "url": "http://127.0.0.1/enforced.yaml", "sha256": sha256(ENFORCED)}})
    with pytest.raises(SettingsError, match=r"url: must be an https:// URL") as raised:
        load(project)
    assert raised.value.path == str(config) and raised.value.line == 5
    configure(managed, server, {"enforced.yaml": {"url": server.url("enforced.yaml")}})
    with pytest.raises(SettingsError, match="needs sha256: .* or public_key:"):
        load(project)
    configure(managed, server, {"../enforced.yaml": pinned(server, "x", ENFORCED)})
    with pytest.raises(SettingsError, match="not a managed file's name"):
        load(project)
    (managed / "enforced.yaml").write_bytes(ENFORCED)
    configure(managed, server, {"enforced.yaml": pinned(server, "x", ENFORCED)})
    with pytest.raises(SettingsError, match="also a file in"):
        load(project)


def test_the_server_certificate_is_verified(project, managed, server):
    server.files["enforced.yaml"] = ENFORCED
    configure(managed, server, {"enforced.yaml": pinned(server, "enforced.yaml", ENFORCED)},
              ca_file=None)
    with pytest.raises(PolicyError, match="CERTIFICATE_VERIFY_FAILED"):
        load(project)            # the system's CAs do not know the self-signed certificate


def test_a_redirect_to_http_is_not_followed(project, managed, server):
    server.redirects["enforced.yaml"] = "http://127.0.0.1:9/enforced.yaml"
    configure(managed, server, {"enforced.yaml": pinned(server, "enforced.yaml", ENFORCED)})
    with pytest.raises(PolicyError, match="redirected to http://127.0.0.1:9/enforced.yaml, "
                       "which is not https://"):
        load(project)
    server.redirects["enforced.yaml"] = server.url("moved.yaml")
    server.files["moved.yaml"] = ENFORCED
    assert denies(load(project), "git push *")


def test_a_server_that_does_not_answer_holds_the_start_for_the_timeout_only(
        project, managed, server):
    server.files["enforced.yaml"] = ENFORCED
    configure(managed, server, {"enforced.yaml": pinned(server, "enforced.yaml", ENFORCED)})
    load(project)
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)             # connects, never says a word (no TLS handshake)
    url = f"https://127.0.0.1:{silent.getsockname()[1]}/enforced.yaml"
    configure(managed, server, {"enforced.yaml": {"url": url, "sha256": sha256(ENFORCED)}},
              timeout=0.5)
    started = time.monotonic()
    policy = load(project)
    assert time.monotonic() - started < 2
    assert denies(policy, "git push *")
    assert policy.delivered[0].failure == "no answer within 0.5 s"
    silent.close()


def openssl(*argv: str, data: bytes | None = None) -> bytes:
    return subprocess.run(["openssl", *argv], input=data, check=True,
                          capture_output=True).stdout


def test_signed_files_as_docs_sign_them(project, managed, server, tmp_path):
    key = tmp_path / "org.pem"
    openssl("genpkey", "-algorithm", "ed25519", "-out", str(key))
    public = openssl("pkey", "-in", str(key), "-pubout").decode()

    def sign(name: str, body: bytes) -> bytes:      # docs/policies.md's recipe
        signed = tmp_path / "signed"
        signed.write_bytes(SIGNED.format(name=name).encode() + body)
        return openssl("pkeyutl", "-sign", "-rawin", "-inkey", str(key), "-in", str(signed))

    server.files["enforced.yaml"] = ENFORCED
    server.files["enforced.yaml.sig"] = sign("enforced.yaml", ENFORCED)
    configure(managed, server, {"enforced.yaml": {"url": server.url("enforced.yaml"),
                                                  "public_key": public}})
    policy = load(project)
    assert denies(policy, "git push *") and policy.delivered[0].checks.startswith("signed")

    server.files["enforced.yaml"] = NEWER           # a new version, signed: taken at once
    server.files["enforced.yaml.sig"] = sign("enforced.yaml", NEWER)
    assert denies(load(project), "curl *")

    server.files["enforced.yaml"] = BASE            # signed, but as another file: refused
    server.files["enforced.yaml.sig"] = sign("policies/base.yaml", BASE)
    policy = load(project)
    assert denies(policy, "curl *")
    assert policy.delivered[0].failure == ("its signature does not verify with the managed "
                                           "config's public key")
    copy_of("enforced.yaml").write_bytes(b"rules: []\n")
    server.stop()
    with pytest.raises(PolicyError, match="its signature does not verify"):
        load(project)


def test_only_the_managed_config_may_name_delivered_files(project, managed, server):
    configure(managed, server, {"enforced.yaml": pinned(server, "x", ENFORCED)})
    assert load_settings(project).sandbox == "auto"     # the managed config: accepted
    user = state_dir().parent / "config" / "config.yaml"
    user.parent.mkdir(parents=True)
    user.write_text("model: offline\nmanaged_policy:\n  files: {}\n")
    with pytest.raises(SettingsError, match="managed_policy: is read only from the managed "
                       "config") as raised:
        load_settings(project)
    assert raised.value.line == 2


def test_policy_show_says_where_each_managed_file_came_from_and_when(
        project, managed, server, monkeypatch, capsys):
    """`dm_cc policy show` (text and --json): the URL, the checks, the cached copy and
    when it was fetched; with the server down, that the fetch failed and which copy holds."""
    from dm_cc.cli import main

    server.files["enforced.yaml"] = ENFORCED
    configure(managed, server, {"enforced.yaml": pinned(server, "enforced.yaml", ENFORCED)})
    (managed / "policy.yaml").write_text("rules: []\n")
    monkeypatch.chdir(project)
    assert main(["policy", "show"]) == 0
    shown = capsys.readouterr().out.split("managed files (the organisation's):\n")[1]
    lines = [line.strip() for line in shown.splitlines()]
    assert lines[0] == f"{managed / 'policy.yaml'} (in the managed directory)"
    assert lines[1] == f"enforced.yaml: from {server.url('enforced.yaml')} (sha256 pinned)"
    copy = copy_of("enforced.yaml")
    assert lines[2].startswith(f"copy: {copy}, fetched 20") and sha256(ENFORCED) in lines[2]
    assert main(["policy", "show", "--json"]) == 0
    [delivered] = json.loads(capsys.readouterr().out)["managed_from_url"]
    assert (delivered["url"], delivered["copy"], delivered["failure"]) == (
        server.url("enforced.yaml"), str(copy), None)
    fetched = delivered["fetched_at"]
    assert fetched in lines[2]

    server.stop()
    assert main(["policy", "show"]) == 0
    out = capsys.readouterr()
    assert f"the last good copy, fetched {fetched}, is in force" in out.out
    assert "failed: connection refused" in out.out
    assert main(["policy", "show", "--json"]) == 0
    [delivered] = json.loads(capsys.readouterr().out)["managed_from_url"]
    assert (delivered["fetched_at"], delivered["failure"]) == (fetched, "connection refused")
