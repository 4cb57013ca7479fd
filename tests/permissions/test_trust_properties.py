"""What a repository's rules may decide, as properties of the gate (DESIGN.md §10):
untrusted, they only tighten; trusted, they never loosen a request that reaches
beyond the project nor a decision the person's own rules made; and a protected
path's edit is allowed only by an exact rule that is not the repository's."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from support.requests import Request

from dm_cc.permissions import REACHING, STRICTNESS, Gate, Layer, PathContext, Rule

CONTEXT = PathContext(root="/p", home="/home/me")
PATTERNS = {
    "read": ["*", "**", "src/**", "/home/me/**", "/etc/**", ".envrc", "secret.txt"],
    "edit": ["*", "**", "src/**", "/home/me/**", ".envrc", "src/a.py", ".git/config"],
    "bash": ["*", "git *", "git push *", "rm *", "npm test"],
    "webfetch": ["*", "https://a.example/*"],
    "network": ["*", "pypi.org"],
    "sandbox_escape": ["*", "npm test"],
    "external_directory": ["*", "/home/me/**"],
}
REQUESTS = [("read", "src/a.py"), ("read", "/home/me/.ssh/id_rsa"), ("read", "/etc/passwd"),
            ("edit", "src/a.py"), ("edit", "/home/me/.bashrc"), ("edit", ".envrc"),
            ("edit", ".git/config"), ("bash", "git push origin"), ("bash", "npm test"),
            ("bash", "rm a"), ("webfetch", "https://a.example/x"), ("network", "pypi.org"),
            ("sandbox_escape", "npm test"), ("external_directory", "/home/me")]
PROTECTED = {".envrc": "direnv runs it", ".git/config": "git runs what it says"}


@st.composite
def rules(draw, source: str, actions=("allow", "deny", "ask")) -> tuple[Rule, ...]:
    found = []
    for _ in range(draw(st.integers(0, 6))):
        permission = draw(st.sampled_from(sorted(PATTERNS)))
        found.append(Rule(permission, draw(st.sampled_from(PATTERNS[permission])),
                          draw(st.sampled_from(actions)), source=source))
    return tuple(found)


def request(permission: str, pattern: str) -> Request:
    return Request(permission, pattern, protected=PROTECTED.get(pattern)
                   if permission == "edit" else None)


FLOOR = (Rule("*", "*", "ask", source="builtin"), Rule("read", "**", "allow", source="builtin"))


def stack(project: tuple[Rule, ...], origin: str, person: tuple[Rule, ...],
          person_first: tuple[Rule, ...] = ()) -> list[Layer]:
    said = project if origin == "repository" else tuple(r for r in project if r.action != "allow")
    return [Layer("builtin", FLOOR, origin="builtin"), Layer("managed", person_first),
            Layer("project", said, origin=origin), Layer("user", person)]  # type: ignore[arg-type]


def without(person: tuple[Rule, ...], person_first: tuple[Rule, ...] = ()) -> Gate:
    return Gate([Layer("builtin", FLOOR, origin="builtin"), Layer("managed", person_first),
                 Layer("user", person)], CONTEXT)


@settings(max_examples=150, deadline=None)
@given(rules("project"), rules("user"), rules("managed"))
def test_an_untrusted_repository_only_tightens(project, person, managed):
    gate = Gate(stack(project, "untrusted", person, managed), CONTEXT)
    bare = without(person, managed)
    for permission, pattern in REQUESTS:
        r = request(permission, pattern)
        assert STRICTNESS[gate.judge(r).action] >= STRICTNESS[bare.judge(r).action], (r, project)


@settings(max_examples=150, deadline=None)
@given(rules("project"), rules("user"), rules("managed"))
def test_a_trusted_repository_never_loosens_beyond_the_project_or_over_the_person(
        project, person, managed):
    gate = Gate(stack(project, "repository", person, managed), CONTEXT)
    bare = without(person, managed)
    for permission, pattern in REQUESTS:
        r = request(permission, pattern)
        mine = bare.judge(r)
        beyond = permission in REACHING or pattern.startswith("/") or r.protected is not None
        if beyond or mine.origin == "person":
            assert STRICTNESS[gate.judge(r).action] >= STRICTNESS[mine.action], (r, project)


@settings(max_examples=150, deadline=None)
@given(rules("project", ("allow",)), rules("user"), st.booleans())
def test_a_protected_edit_is_allowed_only_by_an_exact_rule_of_the_persons(project, person,
                                                                           trusted):
    gate = Gate(stack(project, "repository" if trusted else "untrusted", person), CONTEXT)
    for pattern in PROTECTED:
        verdict = gate.judge(request("edit", pattern))
        if verdict.action == "allow":
            assert verdict.rule.pattern == pattern and verdict.origin == "person", verdict
