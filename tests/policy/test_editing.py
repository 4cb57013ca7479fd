"""One rule added to or removed from a policy file as a line of its text
(dm_cc/policy/editing.py): everything else kept, comments and all; anything it
cannot do by a line refused with the file left as it was."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from dm_cc.errors import PolicyError
from dm_cc.policy import NewRule, add_rule, numbered, remove_rule, save
from dm_cc.policy.loader import load_policy_file

DENY_RM = NewRule("deny", "bash", "rm -rf *", 'no "deletes" # here')


def _file(tmp_path: Path, text: str, name: str = "policy.yaml") -> Path:
    path = tmp_path / name
    path.write_bytes(textwrap.dedent(text).lstrip("\n").encode())
    return path


def _added(path: Path, rule: NewRule = DENY_RM) -> str:
    edit = add_rule(path, path.name, rule)
    save(edit)
    loaded = load_policy_file(path)
    assert rule.matches(loaded.rules[-1])                         # it is the file's last rule
    assert loaded.rules[-1].source.endswith(f":{edit.rule.source.rsplit(':', 1)[1]}")
    return path.read_text()


def _removed(path: Path, number: int) -> str:
    place = numbered([load_policy_file(path)])[number - 1]
    save(remove_rule(path, path.name, place))
    assert place.rule not in numbered([load_policy_file(path)])
    return path.read_text()


BLOCK = """
    # my rules
    rules:   # the list
      - {permission: bash, pattern: "git push *", action: ask}  # pushes
      # between
      - {permission: edit, pattern: "src/**", action: allow}

    # the end
    """


def test_a_rule_is_one_more_line_after_the_last_and_every_comment_stays(tmp_path):
    path = _file(tmp_path, BLOCK)
    before = path.read_text()
    after = _added(path)
    new = '  - {permission: bash, pattern: "rm -rf *", action: deny, reason: "no \\"deletes\\" # here"}\n'
    assert after == before.replace("allow}\n", "allow}\n" + new)


def test_a_rule_takes_the_style_of_the_items_before_it(tmp_path):
    path = _file(tmp_path, """
        rules:
          - permission: bash
            pattern: "git push *"
            action: ask
        tests:
          - {tool: bash, input: ls, expect: allow}
        """)
    assert _added(path, NewRule("allow", "read", "*")) == textwrap.dedent("""\
        rules:
          - permission: bash
            pattern: "git push *"
            action: ask
          - permission: read
            pattern: "*"
            action: allow
        tests:
          - {tool: bash, input: ls, expect: allow}
        """)


@pytest.mark.parametrize(("text", "expected"), [
    ("", "# dm_cc policy (docs/policies.md); rules added with /permissions add\n"
         'rules:\n  - {permission: read, pattern: "*", action: allow}\n'),
    ("# only a comment\n",
     '# only a comment\nrules:\n  - {permission: read, pattern: "*", action: allow}\n'),
    ("permission:\n  webfetch: deny\n",
     'permission:\n  webfetch: deny\nrules:\n  - {permission: read, pattern: "*", action: allow}\n'),
    ("rules: []\n", 'rules: [{permission: read, pattern: "*", action: allow}]\n'),
    ('rules: [{permission: edit, pattern: "a", action: ask}]  # one\n',
     'rules: [{permission: edit, pattern: "a", action: ask}, '
     '{permission: read, pattern: "*", action: allow}]  # one\n'),
    ('rules:\n  - {permission: edit, pattern: "a", action: ask}',          # no newline at the end
     'rules:\n  - {permission: edit, pattern: "a", action: ask}\n'
     '  - {permission: read, pattern: "*", action: allow}\n'),
])
def test_a_rule_goes_where_the_file_keeps_its_rules(tmp_path, text, expected):
    path = tmp_path / "policy.yaml"
    path.write_text(text)
    assert _added(path, NewRule("allow", "read", "*")) == expected


def test_a_file_that_is_not_there_is_made(tmp_path):
    path = tmp_path / ".dm_cc" / "policy.yaml"
    save(add_rule(path, "policy.yaml", NewRule("ask", "bash", "git push *")))
    assert [(r.action, r.pattern) for r in load_policy_file(path).rules] == [("ask", "git push *")]


def test_windows_line_ends_stay_as_they_are(tmp_path):
    path = tmp_path / "policy.yaml"
    path.write_bytes(b'# crlf\r\nrules:\r\n  - {permission: edit, pattern: "a", action: ask}\r\n')
    _added(path, NewRule("allow", "read", "*"))
    assert path.read_bytes() == (b'# crlf\r\nrules:\r\n  - {permission: edit, pattern: "a", '
                                 b'action: ask}\r\n  - {permission: read, pattern: "*", '
                                 b'action: allow}\r\n')


def test_a_removed_rule_takes_its_lines_and_its_own_comment_and_nothing_else(tmp_path):
    path = _file(tmp_path, BLOCK)
    assert _removed(path, 1) == textwrap.dedent("""\
        # my rules
        rules:   # the list
          # between
          - {permission: edit, pattern: "src/**", action: allow}

        # the end
        """)
    assert _removed(path, 1) == "# my rules\nrules: []   # the list\n  # between\n\n# the end\n"


def test_rules_are_removed_wherever_the_loader_finds_them(tmp_path):
    path = _file(tmp_path, """
        permission:
          read: allow
          bash:
            "git *": allow   # git
        agents:
          plan:
            rules:
              - permission: bash
                pattern: "make *"
                action: allow
        rules: [{permission: edit, pattern: "a", action: ask}, {permission: edit, pattern: "b", action: deny}]
        """)
    places = numbered([load_policy_file(path)])
    assert [(p.section, p.rule.pattern) for p in places] == [
        ((), "*"), ((), "git *"), (("agents", "plan"), "make *"), ((), "a"), ((), "b")]
    assert _removed(path, 2) == textwrap.dedent("""\
        permission:
          read: allow
          bash: {}
        agents:
          plan:
            rules:
              - permission: bash
                pattern: "make *"
                action: allow
        rules: [{permission: edit, pattern: "a", action: ask}, {permission: edit, pattern: "b", action: deny}]
        """)
    _removed(path, 2)        # agents.plan's only rule
    _removed(path, 2)        # the flow list's first
    assert path.read_text() == textwrap.dedent("""\
        permission:
          read: allow
          bash: {}
        agents:
          plan:
            rules: []
        rules: [{permission: edit, pattern: "b", action: deny}]
        """)


def test_a_file_that_does_not_load_is_refused_with_its_line_and_kept(tmp_path):
    path = _file(tmp_path, """
        rules:
          - {permission: bash, pattern: "git *", action: allow}
          - {permission: bash, pattern: "x", action: maybe}
        """)
    before = path.read_bytes()
    with pytest.raises(PolicyError, match=r"policy\.yaml:3"):
        add_rule(path, "policy.yaml", DENY_RM)
    assert path.read_bytes() == before


def test_a_rule_that_does_not_load_is_refused_with_the_reason(tmp_path):
    path = _file(tmp_path, BLOCK)
    before = path.read_bytes()
    with pytest.raises(PolicyError, match=r"policy\.yaml:6: unknown permission 'write'"):
        add_rule(path, "policy.yaml", NewRule("allow", "write", "src/**"))
    assert path.read_bytes() == before


def test_what_cannot_be_changed_by_a_line_is_refused(tmp_path):
    path = _file(tmp_path, '{rules: [{permission: edit, pattern: "a", action: ask}]}\n')
    with pytest.raises(PolicyError, match="add the rule by hand"):
        add_rule(path, "policy.yaml", DENY_RM)
    odd = _file(tmp_path, """
        rules:
          -
            {permission: edit, pattern: "a", action: ask}
        """, "odd.yaml")
    before = odd.read_bytes()
    with pytest.raises(PolicyError, match=r"odd\.yaml:3: cannot remove this item by its lines"):
        remove_rule(odd, "odd.yaml", numbered([load_policy_file(odd)])[0])
    assert odd.read_bytes() == before


def test_a_file_changed_since_it_was_read_is_not_overwritten(tmp_path):
    path = _file(tmp_path, BLOCK)
    edit = add_rule(path, "policy.yaml", DENY_RM)
    path.write_text(BLOCK + "# someone else's line\n")
    with pytest.raises(PolicyError, match="changed while it was being edited"):
        save(edit)
    assert path.read_text().endswith("# someone else's line\n")
    stale = numbered([load_policy_file(path)])[1]
    path.write_text(textwrap.dedent(BLOCK).replace("src/**", "lib/**"))
    with pytest.raises(PolicyError, match="changed since this session read it"):
        remove_rule(path, "policy.yaml", stale)


def test_saving_keeps_the_mode_and_writes_through_a_link(tmp_path):
    real = _file(tmp_path, BLOCK, "real.yaml")
    real.chmod(0o600)
    link = tmp_path / "policy.yaml"
    link.symlink_to(real)
    save(add_rule(link, "policy.yaml", DENY_RM))
    assert link.is_symlink() and "rm -rf" in real.read_text()
    assert real.stat().st_mode & 0o777 == 0o600
