"""Issue 10, themes 7 and 8: a webfetch deny for a host or a path holds under every
spelling of the URL (IP literal forms, userinfo, case, IDNA, percent-encoding,
doubled separators, dot segments); MCP arguments are matched structurally over
top-level keys, so a nested value can never pose as a top-level one. Each case is
judged by the engine with only its own rules (after the default ask)."""

from __future__ import annotations

import json

import pytest
from judging import assert_meets, project_in

from dm_cc.permissions import Rule
from dm_cc.permissions.requests import canonical_url
from dm_cc.tools.catalog import input_requests


def W(pattern, action):
    return Rule("webfetch", pattern, action)


def M(pattern, action, permission="mcp__git__log"):
    return Rule(permission, pattern, action)


LOOP = [W("*", "allow"), W("http://127.0.0.1:8765/*", "deny")]
LOCAL = [W("*", "allow"), W("http://localhost:8765/*", "deny")]
ADMIN = [W("*", "allow"), W("https://example.com/admin*", "deny")]
PUBLIC = [W("https://example.com/public/*", "allow")]

URL_CASES = [
    # every IPv4 literal spelling of 127.0.0.1 (inet_aton / WHATWG IPv4 parser)
    *[(LOOP, f"http://{host}:8765/secret", "deny") for host in (
        "2130706433", "0x7f000001", "0X7F000001", "0x7f.1", "0x7f.0.0.1", "0177.0.0.1",
        "0177.0.0.01", "127.1", "127.0.1", "0x7f.0x0.0x0.0x1", "017700000001", "127.0.0.1.",
        "[::ffff:127.0.0.1]", "[::ffff:7f00:1]", "[0:0:0:0:0:ffff:7f00:1]",
        "[::FFFF:127.0.0.1]", "%31%32%37.0.0.1", "user@127.0.0.1", "a:b@127.0.0.1",
        "127.0.0.1:8765@127.0.0.1")],
    # the loopback family: a deny for one name of this machine holds for the others
    *[(LOOP, f"http://{host}:8765/secret", "deny") for host in (
        "0", "0.0.0.0", "0x0", "localhost", "LOCALHOST", "localhost.", "[::1]", "[::]",
        "127.0.0.2", "app.localhost")],
    *[(LOCAL, f"http://{host}:8765/secret", "deny") for host in (
        "127.0.0.1", "127.1", "2130706433", "0", "[::1]", "[::ffff:127.0.0.1]", "LocalHost",
        "localhos%74", "localhost.")],
    # userinfo, case, ports, IDNA
    (LOCAL, "http://example.com@localhost:8765/x", "deny"),
    (LOCAL, "http://localhost:8765@example.com/x", "allow"),
    (LOCAL, "HTTP://LOCALHOST:8765/x", "deny"),
    ([W("*", "allow"), W("http://localhost/*", "deny")], "http://localhost:80/x", "deny"),
    ([W("*", "allow"), W("http://localhost/*", "deny")], "http://localhost:0080/x", "deny"),
    ([W("*", "allow"), W("https://example.com/*", "deny")], "https://ＥＸＡＭＰＬＥ.com/x", "deny"),
    ([W("*", "allow"), W("https://example.com/*", "deny")], "https://example。com/x", "deny"),
    ([W("*", "allow"), W("https://bücher.de/*", "deny")], "https://xn--bcher-kva.de/x", "deny"),
    ([W("*", "allow"), W("https://xn--bcher-kva.de/*", "deny")], "https://BÜCHER.de/x", "deny"),
    # spellings that clients read differently: never allowed
    ([W("*", "allow")], "http://example.com\\@localhost:8765/", "not-allow"),
    ([W("*", "allow")], "http://a@b@localhost:8765/", "not-allow"),
    ([W("*", "allow")], "http://08.0.0.1/", "not-allow"),
    ([W("*", "allow")], "http://1.2.3.4.5/", "not-allow"),
    ([W("*", "allow")], "http://256.0.0.1/", "not-allow"),
    ([W("*", "allow")], "http://4294967296/", "not-allow"),
    ([W("*", "allow")], "http://[fe80::1%25eth0]/", "not-allow"),
    ([W("*", "allow")], "http://fa\u00df.de/", "not-allow"),
    ([W("*", "allow")], "http://exa\tmple.com/", "not-allow"),
    ([W("*", "allow")], "http://example..com/", "not-allow"),
    ([W("*", "allow")], "http:/example.com/", "not-allow"),
    ([W("*", "allow")], "http://[::127.0.0.1]/", "not-allow"),
    # paths: percent-encoding, dot segments, doubled and encoded separators
    *[(ADMIN, f"https://example.com{path}", "deny") for path in (
        "/admin", "/%61dmin", "/%61%64%6d%69%6e/x", "//admin", "///admin/x", "/x/../admin",
        "/x/%2e%2e/admin", "/x/%2E%2E/admin", "/x/.%2e/admin", "/./admin", "/x/..%2Fadmin",
        "/x%2F..%2Fadmin", "/x/..%2fadmin", "/%2Fadmin", "/x\\..\\admin", "/x/..%5Cadmin",
        "/x/..;/admin", "/ADMIN", "/Admin/x", "/x//../admin", "/x/%252e%252e/admin",
        "/%2561dmin", "/admin%00", "/admin/.", "/admin#x", "/admin?x=1", "/adm%69n;x")],
    (LOCAL, "http://localhost:8765#@example.com/", "deny"),
    (LOCAL, "http://localhost:8765?@example.com/", "deny"),
    (LOCAL, "http://127.0.0.1%2e:8765/x", "deny"),
    (LOCAL, "http://0177.0.0.1.:8765/x", "deny"),
    ([W("*", "allow"), W("https://example.com/*", "deny")], "https://example.com#@other.org/", "deny"),
    *[(PUBLIC, f"https://example.com{path}", "not-allow") for path in (
        "/public/../secret", "/public/%2e%2e/secret", "/public/..%2Fsecret",
        "/public%2F..%2Fsecret", "/public/..%5Csecret", "/public/..;/secret",
        "/public\\..\\secret", "/public//../../secret", "/public/%252e%252e/secret")],
    # no false asks: ordinary URLs stay allowed
    ([W("*", "allow"), W("https://example.com/café/*", "deny")],
     "https://example.com/caf%C3%A9/x", "deny"),
    ([W("*", "allow"), W("https://example.com/a b", "deny")], "https://example.com/a%20b", "deny"),
    ([W("https://example.com/café/*", "allow")], "https://example.com/café/x", "not-allow"),
    (PUBLIC, "https://example.com/public/a.html", "allow"),
    (PUBLIC, "https://example.com/public/a%20b.html", "allow"),
    (PUBLIC, "https://example.com/public/%7Euser/x?q=a%2Fb#frag", "allow"),
    (PUBLIC, "HTTPS://EXAMPLE.COM:443/public/x", "allow"),
    ([W("https://gitlab.com/*", "allow")], "https://gitlab.com/api/v4/projects/g%2Fp", "allow"),
    ([W("http://localhost:3000/*", "allow")], "http://localhost:3000/x", "allow"),
    ([W("http://127.0.0.1:8000/*", "allow")], "http://127.0.0.1:8000/x", "allow"),
    ([W("https://[2001:db8::1]/*", "allow")], "https://[2001:DB8:0::1]/x", "allow"),
    ([W("https://docs.python.org/*", "allow")], "https://docs.python.org/3/library/", "allow"),
]


@pytest.mark.parametrize(("rules", "url", "expect"), URL_CASES,
                         ids=[f"{c[2]}:{c[1][:50]}" for c in URL_CASES])
def test_url_variant(rules, url, expect, where):
    assert_meets(rules, "webfetch", url, expect, where)


@pytest.mark.parametrize(("raw", "fetched"), [
    ("http://2130706433/x", "http://127.0.0.1/x"),
    ("http://0x7f.1:8080/x", "http://127.0.0.1:8080/x"),
    ("http://[::ffff:7f00:1]/", "http://127.0.0.1/"),
    ("http://0/", "http://0.0.0.0/"),
    ("http://user:pw@Example.COM./a/%2e%2e/b", "http://example.com/b"),
    ("https://example.com/%7e%61/", "https://example.com/~a/"),
    ("https://ＥＸＡＭＰＬＥ.com/", "https://example.com/"),
    ("https://bücher.de/", "https://xn--bcher-kva.de/"),
    ("https://example.com/a%2fb", "https://example.com/a%2Fb"),
])
def test_the_fetch_goes_to_the_judged_address(raw, fetched):
    # webfetch fetches canonical_url(raw): the same text the request was judged as.
    assert canonical_url(raw) == fetched
    assert canonical_url(fetched) == fetched  # stable: no re-parse differential


# ---------------------------------------------------------------- MCP arguments

DOCS = [M("docs/*", "ask"), M("branch=docs/*", "allow")]

MCP_CASES = [
    # the spoof: a nested key is not a top-level key
    ([M("*", "deny"), M("branch=docs/*", "allow")],
     {"branch": "main", "opts": {"branch": "docs/x"}}, "deny"),
    ([M("*", "deny"), M("branch=docs/*", "allow")],
     {"branch": "main", "x": [{"branch": "docs/x"}]}, "deny"),
    ([M("*", "deny"), M("branch=docs/*", "allow")], {"opts": {"branch": "docs/x"}}, "deny"),
    ([M("*", "deny"), M("branch=docs/*", "allow")], {"branch": "docs/x"}, "allow"),
    ([M("*", "deny"), M("branch=docs/*", "allow")], {"branch": "docs/x", "n": 1}, "allow"),
    ([M("*", "deny"), M("branch=docs/*", "allow")], {"branch_x": "docs/x"}, "deny"),
    ([M("*", "deny"), M("branch=docs/*", "allow")], {"msg": "\"branch\": \"docs/x\""}, "deny"),
    # several conditions: all must hold; an absent key fails its condition
    ([M("repo=myorg/* branch=docs/*", "allow")], {"repo": "myorg/a", "branch": "docs/x"},
     "allow"),
    ([M("repo=myorg/* branch=docs/*", "allow")], {"repo": "other/a", "branch": "docs/x"},
     "not-allow"),
    ([M("repo=myorg/* branch=docs/*", "allow")], {"repo": "myorg/a"}, "not-allow"),
    ([M("repo=myorg/* branch=docs/*", "allow")], {"branch": "docs/x", "repo": "myorg/a"},
     "allow"),
    # '=' and spaces in values; quoted keys and values
    ([M("q=a=b", "allow")], {"q": "a=b"}, "allow"),
    ([M("q=a=b", "allow")], {"q": "a"}, "not-allow"),
    ([M('title="hello world*"', "allow")], {"title": "hello world, again"}, "allow"),
    ([M('title="hello world*"', "allow")], {"title": "hello"}, "not-allow"),
    ([M('"a b"=x', "allow")], {"a b": "x"}, "allow"),
    ([M('"a=b"=x', "allow")], {"a=b": "x"}, "allow"),
    ([M('"a=b"=x', "allow")], {"a": "b=x"}, "not-allow"),
    ([M("a=b=x", "allow")], {"a=b": "x"}, "not-allow"),
    ([M("tag=", "allow")], {"tag": ""}, "allow"),
    ([M("tag=", "allow")], {"tag": "x"}, "not-allow"),
    ([M('q="a b"', "allow")], {"q": "a b"}, "allow"),
    ([M('q="a b"', "allow")], {"q": "a  b"}, "not-allow"),
    ([M('q="say \\"hi\\""', "allow")], {"q": 'say "hi"'}, "allow"),
    ([M("q=a*", "allow")], {"q": "a\nrm -rf /"}, "allow"),
    ([M(" q=a", "allow")], {"q": "a"}, "not-allow"),
    # arrays and objects match only '*'
    ([M("paths=*", "allow")], {"paths": ["a", "b"]}, "allow"),
    ([M("paths=a", "allow")], {"paths": ["a"]}, "not-allow"),
    ([M("paths=[*", "allow")], {"paths": ["a"]}, "not-allow"),
    ([M("opts=*", "allow")], {"opts": {"x": 1}}, "allow"),
    ([M("opts={*", "allow")], {"opts": {"x": 1}}, "not-allow"),
    ([M("*", "allow"), M("paths=secret*", "deny")], {"paths": ["ok", "secret.txt"]}, "deny"),
    ([M("*", "allow"), M("branch=main", "deny")], {"branch": ["main"]}, "deny"),
    # numbers, booleans, null: the JSON scalar's text
    ([M("*", "allow"), M("force=true", "deny")], {"force": True}, "deny"),
    ([M("*", "allow"), M("force=true", "deny")], {"force": "true"}, "deny"),
    ([M("*", "allow"), M("force=true", "deny")], {"force": False}, "allow"),
    ([M("n=1", "allow")], {"n": 1}, "allow"),
    ([M("n=1", "allow")], {"n": True}, "not-allow"),
    ([M("n=1", "allow")], {"n": 1.5}, "not-allow"),
    ([M("n=1*", "allow")], {"n": 15}, "allow"),
    ([M("x=null", "allow")], {"x": None}, "allow"),
    # unicode: allow as written, deny under case and compatibility forms
    ([M("name=café", "allow")], {"name": "café"}, "allow"),
    ([M("name=café", "allow")], {"name": "cafe\u0301"}, "not-allow"),
    ([M("*", "allow"), M("name=café", "deny")], {"name": "CAFE\u0301"}, "deny"),
    ([M("*", "allow"), M("repo=myorg/secret", "deny")], {"repo": "MyOrg/Secret"}, "deny"),
    ([M("*", "allow"), M("repo=myorg/secret", "deny")], {"repo": "ｍｙｏｒｇ/secret"}, "deny"),
    ([M("repo=myorg/*", "allow")], {"repo": "MyOrg/x"}, "not-allow"),
    ([M("ключ=значение", "allow")], {"ключ": "значение"}, "allow"),
    # '*' is any arguments, including none
    ([M("*", "allow")], {}, "allow"),
    ([M("*", "allow")], {"a": {"b": [1, 2]}}, "allow"),
    ([M("a=*", "allow")], {}, "not-allow"),
    # exact JSON (an "always allow" answer) still matches that call only
    ([M('{"n": 1, "repo": "x"}', "allow")], {"repo": "x", "n": 1}, "allow"),
    ([M('{"n": 1, "repo": "x"}', "allow")], {"repo": "x", "n": True}, "not-allow"),
    ([M('{"n": 1, "repo": "x"}', "allow")], {"repo": "x", "n": 1, "m": 2}, "not-allow"),
    # an allow over the JSON text can be spoofed: it is withheld; a deny over it still holds
    ([M('*"branch": "docs/*', "allow")], {"branch": "main", "o": {"branch": "docs/x"}},
     "not-allow"),
    ([M('*"branch": "docs/*', "allow")], {"branch": "docs/x"}, "not-allow"),
    ([M("*", "allow"), M('*"force": true*', "deny")], {"force": True}, "deny"),
    # the permission wildcard is unchanged
    ([M("repo=x", "allow", "mcp__git__*")], {"repo": "x"}, "allow"),
    ([M("*", "allow", "*"), M("repo=x", "deny", "mcp__*")], {"repo": "x"}, "deny"),
]


@pytest.mark.parametrize(("rules", "arguments", "expect"), MCP_CASES,
                         ids=[f"{c[2]}:{json.dumps(c[1], ensure_ascii=False)[:40]}"
                              for c in MCP_CASES])
def test_mcp_variant(rules, arguments, expect, where):
    assert_meets(rules, "mcp__git__log", json.dumps(arguments, ensure_ascii=False), expect, where)


@pytest.mark.parametrize("text", [
    '{"branch": "docs/x", "branch": "main"}',
    '{"branch": "main", "branch": "docs/x"}',
    '{"o": {"b": 1, "b": 2}, "branch": "docs/x"}',
])
def test_json_text_with_duplicate_keys_is_refused(text, where):
    # JSON parsers disagree on which duplicate wins: such a text names no one call.
    with pytest.raises(ValueError, match="duplicate key"):
        input_requests("mcp__git__log", text, where)


def test_json_text_spacing_and_key_order_do_not_matter(where):
    rules = [M("*", "deny"), M("branch=docs/*", "allow")]
    assert_meets(rules, "mcp__git__log", '{"repo": "a",\n  "branch" : "docs/x"}', "allow", where)


@pytest.fixture(scope="module")
def where(tmp_path_factory):
    return project_in(tmp_path_factory.mktemp("urls"))


# ---------------------------------------------------------------- what policy check shows

POLICY = """\
rules:
  - {permission: "mcp__git__*", pattern: "*", action: ask}
  - {permission: mcp__git__log, pattern: "repo=myorg/*", action: allow}
  - {permission: mcp__git__push, pattern: '*"branch": "docs/*', action: allow}
  - {permission: webfetch, pattern: "*", action: allow}
  - {permission: webfetch, pattern: "http://localhost:8765/*", action: deny}
"""


@pytest.fixture
def check(tmp_path, capsys, monkeypatch):
    from dm_cc.cli import main

    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    mine = tmp_path / "home" / "config" / "policy.yaml"    # the person's own policy: a
    mine.parent.mkdir(parents=True)                       # project's never opens the network
    mine.write_text(POLICY)
    for name, value in (("DM_CC_HOME", tmp_path / "home"), ("DM_CC_MANAGED_DIR", tmp_path / "m"),
                        ("HOME", tmp_path / "home")):
        monkeypatch.setenv(name, str(value))
    monkeypatch.chdir(project)

    def run(*argv: str) -> tuple[int, str, str]:
        capsys.readouterr()
        code = main(["policy", "check", *argv])
        out, err = capsys.readouterr()
        return code, out, err
    return run


def test_policy_check_shows_the_structural_decision(check):
    code, out, _ = check("mcp__git__log", '{"repo": "myorg/x", "n": 3}')
    assert code == 0 and out.startswith("allow: ") and "repo=myorg/*" in out
    _, out, _ = check("mcp__git__log", '{"repo": "x", "o": {"repo": "myorg/x"}}')
    assert out.startswith("ask: ")


def test_policy_check_says_why_a_json_text_allow_is_withheld(check):
    _, out, _ = check("mcp__git__push", '{"branch": "docs/x"}')
    assert out.startswith("ask: ") and "nested value" in out and "repo=myorg/*" in out


def test_policy_check_refuses_duplicate_keys(check):
    code, _, err = check("mcp__git__log", '{"repo": "myorg/x", "repo": "other/y"}')
    assert code == 2 and "duplicate key 'repo'" in err


def test_policy_check_shows_the_canonical_url_and_why_a_url_cannot_be_allowed(check):
    _, out, _ = check("webfetch", "http://0x7f.1:8765/x")
    assert out.startswith("deny: ") and "http://127.0.0.1:8765/x" in out
    assert "another spelling of http://127.0.0.1:8765/x" in out
    _, out, _ = check("webfetch", "http://a@b@example.com/")
    assert out.startswith("ask: ") and "more than one '@'" in out
