"""Differential test of the shell analysis against bash itself (issue 10, theme 1).

Generated lines (templates nesting a payload command, two levels deep) are run by
``/bin/bash`` in a throwaway directory whose PATH holds only stand-in programs (``rm``,
``git``, ``curl``, ``cat`` ...) that append their argv to a log and do nothing else. Every
program bash actually ran must be among the commands the analyser reported (same words),
unless the analysis marked the line dynamic (not allowable). Nothing destructive runs: the
stand-ins only log, builtins only touch the temporary directory.
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from dm_cc.permissions.shell import analyse

BASH = "/bin/bash"
MV = shutil.which("mv") or "/bin/mv"
STAND_INS = ("rm", "git", "curl", "cat", "touch", "ls", "wc")
SEP = "\x1f"

# Payload commands: what the line should not be able to hide.
PAYLOADS = ("rm -rf x", "git push -f", "curl -s u")

# `{c}` is where the payload (or another template) goes. Templates whose payload must not
# contain some character say so in the second element.
TEMPLATES: tuple[tuple[str, str], ...] = (
    ("{c}", ""),
    ("echo a; {c}", ""),
    ("echo a && {c} || true", ""),
    ("echo `{c}`", "`\\"),
    ("echo `echo \\`{c}\\``", "`\\$"),
    ("echo $({c})", ""),
    ('echo "$({c})"', '"'),
    ('echo "${{x#$({c})}}"', '"}'),
    ("echo ${{x:-$({c})}}", "}"),
    ("echo ${{x%%`{c}`}}", "`}\\"),
    ('echo "${{x/a/`{c}`}}"', '`}"\\'),
    ("cat <<EOF; {c}\nhello\nEOF", "\n"),
    ("cat <<EOF && {c}\nhello\nEOF", "\n"),
    ("cat <<'E'OF\n$({c})\nEOF", ""),
    ("cat <<E\\OF\nEOF\n{c}\nE\\OF", ""),
    ('cat <<"EOF"x\nEOFx\n{c}\nEOF', ""),
    ("cat <<EOF\n$({c})\nEOF", ""),
    ("cat <<EOF\n`{c}`\nEOF", "`\\"),
    ("echo a # {c}\n{c}", "\n"),
    ("echo a#b; {c}", ""),
    ("echo a \\\n; {c}", ""),
    ("case a in a) {c};; esac", ";"),
    ("case $({c}) in *) ;; esac", ""),
    ("(( $({c}) )); true", ""),
    ("echo $(( $({c}) ))", ""),
    ("x='a[$({c})]'; (( x )); true", "'"),
    ("x='a[$({c})]'; [[ $x -eq 1 ]]; true", "'"),
    ("x='$({c})'; echo ${{x@P}}", "'}"),
    ("echo $\"$({c})\"", '"'),
    ("shopt -s extglob\necho @(a|b); {c}", ""),
    ("{{ {c}; }}", ""),
    ("({c})", ""),
    ("if true; then {c}; fi", ""),
    ("for i in 1; do {c}; done", ""),
    ("f() {{ {c}; }}; f", ""),
    ("a=$({c})", ""),
    ("bash -c '{c}'", "'"),
    ("bash <<EOF\n{c}\nEOF", "\n"),
    ("sh 0<<EOF\n{c}\nEOF", "\n"),
    ("CDPATH=/tmp cd . && {c}", ""),
    ("eval '{c}'", "'"),
    ("[[ -v 'a[$({c})]' ]]; true", "'"),
    ("x='a[$({c})]'; : ${{!x}}", "'}"),
    ("x='$({c})'; y=x; : ${{!y@P}}", "'}"),
    ("x='a[$({c})]'; let y=x", "'"),
    ("x='a[$({c})]'; declare -i y=x", "'"),
    ("printf -v x 'a[$({c})]'; (( x ))", "'%"),
    ("echo $'\\'' ; {c}", ""),
    ("echo $'a\\'b'; {c}", ""),
    ('cat <<< "$({c})"', '"'),
    ("cat < <({c})", ""),
    ("echo >(:) <(:) ; {c}", ""),
    ("time {c}", ""),
    ("! {c}", ""),
    ("{c} | cat", ""),
    ("cat <<-EOF\n\t$({c})\n\tEOF", ""),
    ("cat <<EOF\n\\$(echo){c}\nEOF\n", ""),
    ("for ((i=0; i<1; i++)); do {c}; done", ""),
    ("while false; do :; done; {c}", ""),
    ("x=(a $({c}) b)", ""),
    ("declare x=$({c})", ""),
    ("[[ $({c}) ]]; true", ""),
    ('echo ${{x:-"$({c})"}}', '"}'),
    ('echo "${{x:-\'$({c})\'}}"', "'\"}"),
    ("PS4='$({c})'; set -x; :", "'"),
    ("echo a\\\n{c}", ""),
    ("echo a;\\\n{c}", ""),
)

# Constructs outside the modelled subset (issue 22): descriptors, bash's command tables,
# aliases, shells fed by an enclosing construct, bodies tree-sitter rejects, heredoc
# delimiters in other quoting forms. For these even a dynamic line must not hide what
# bash runs from the deny rules: every program bash ran is among the commands reported
# or the guesses offered to the deny rules.
KEPT_TEMPLATES: tuple[tuple[str, str], ...] = (
    ("{{ bash; }} <<< '{c}'", "'"),
    ("( sh ) <<< '{c}'", "'"),
    ("if :; then sh; fi <<EOF\n{c}\nEOF", ""),
    ("f() {{ sh; }}; f <<< '{c}'", "'"),
    ("exec <<< '{c}'; bash", "'"),
    ("exec 3<<<'{c}'; bash /dev/fd/3", "'"),
    ("exec 3<<<'{c}'; bash <&3", "'"),
    ("{{ bash <&3; }} 3<<<'{c}'", "'"),
    (". /dev/fd/3 3<<< '{c}'", "'"),
    ("source /dev/stdin <<< '{c}'", "'"),
    ("shopt -s expand_aliases\nalias ls='{c}'\nls", "'"),
    ("for x in a; {{ {c}; }}", ""),
    ("for ((i=0; i<1; i++)) {{ {c}; }}", ""),
    ("for x in a; {{ echo $({c}); }}", ""),
    ("cat <<$'EOF'\nEOF\n{c}\n$'EOF'", ""),
    ('cat <<$"EOF"\nEOF\n{c}\n$"EOF"', ""),
    ("cat <<''\nhello\n\n{c}", ""),
    ("bash <<$'EOF'\n{c}\nEOF", ""),
    ("echo $[1<<2]\n{c}", ""),
    # readings of what is not static (issue 22): a name the line sets, $IFS, an echo piped
    ("c='{c}'; $c", "'"),
    ("c='{c}'\n${{c}}", "'"),
    ("{c}", ""),  # the payload itself, then with IFS between its words below
    ("echo {c} | sh", ""),
    ("echo -n {c} | bash -s", ""),
    # other spellings of a descriptor as a path (the kernel reads // /./ .. as it walks)
    ("source /dev//stdin <<< '{c}'", "'"),
    (". /proc/thread-self/fd/0 <<< '{c}'", "'"),
    (". /dev/./fd/3 3<<< '{c}'", "'"),
    ("bash /proc/self/../self/fd/0 <<< '{c}'", "'"),
    # constructs outside the allowlist of node kinds (tables/syntax.py): dynamic, and
    # what bash runs there still reaches the deny rules
    ("select x in a; do {c}; break; done <<< 1", ""),
    ("echo 1 > ans; select x in a; do {c}; break; done < ans", ""),
    ("case a in a) :;& b) {c};; esac", ""),
    ("case a in a) :;;& a) {c};; esac", ""),
    ("echo $`{c}`", "`\\"),
    ("echo $`echo \\`{c}\\``", "`\\$"),  # `$` literal, the escaped backticks read again
    ("echo a |& {c}", ""),
    ("coproc {c}; wait", ""),
    ("coproc {{ {c}; }}; wait", ""),
    ("exec {{fd}}<<<'{c}'; bash /dev/fd/$fd", "'"),
    ("shopt -s extglob\ncase a in @(a|b)) {c};; esac", ""),
)

# bash's command tables (special arrays), hash and aliases re-pointing a name the line then
# runs; {p} is the payload's program, {a} its arguments, /usr/bin/ the stand-ins' directory
# when bash runs the line. And the same after text tree-sitter rejects (the word scan).
REPOINTING_TEMPLATES = (
    "BASH_CMDS[ls]=/usr/bin/{p}; ls {a}",
    "BASH_CMDS[ls]='/usr/bin/{p}'\nls {a}",
    ": ${{BASH_CMDS[ls]:=/usr/bin/{p}}}; ls {a}",
    "read 'BASH_CMDS[ls]' <<< /usr/bin/{p}; ls {a}",
    "printf -v 'BASH_CMDS[ls]' %s /usr/bin/{p}; ls {a}",
    "declare -A BASH_CMDS=([ls]=/usr/bin/{p}); ls {a}",
    "declare -n r=BASH_CMDS; r[ls]=/usr/bin/{p}; ls {a}",
    "hash -p /usr/bin/{p} ls; ls {a}",
    "BASH_ALIASES[ls]='{p}'; shopt -s expand_aliases\nls {a}",
    ": ${{BASH_ALIASES[ls]:={p}}}; shopt -s expand_aliases\nls {a}",
    "shopt -s expand_aliases; alias ls='{p}'\nls {a}",
    "for x in a; {{ :; }}; BASH_CMDS[ls]=/usr/bin/{p}; ls {a}",
    "for x in a; {{ :; }}; c={p}; $c {a}",
    "for x in a; {{ :; }}; {p}${{IFS}}{a}",
    "for x in a; {{ :; }}; {{{p},{a1}}} {a2}",
)

# Ways of spelling the command name `rm` (only used with the rm payload).
NAME_SPELLINGS = ("r$()m", "r''m", "\\rm", "r\\\nm", "$'\\x72m'", "{rm,}", "r{m,}", '"r"m',
                  "r``m", "$'r'm", "''{rm,}")


def _cases() -> list[str]:
    cases = [t.format(c=p) for t, bad in TEMPLATES for p in PAYLOADS
             if not any(ch in p for ch in bad)]
    cases += [t.format(c=f"{name} -rf x") for name in NAME_SPELLINGS for t, bad in TEMPLATES[:6]
              if not any(ch in name for ch in bad)]
    cases.append("{rm,-rf,x}")
    rng = random.Random(10)
    for _ in range(160):  # two levels of nesting
        (outer, bad_o), (inner, bad_i) = rng.choice(TEMPLATES), rng.choice(TEMPLATES)
        payload = rng.choice(PAYLOADS)
        if any(ch in payload for ch in bad_i):
            continue
        middle = inner.format(c=payload)
        if not any(ch in middle for ch in bad_o):
            cases.append(outer.format(c=middle))
    return list(dict.fromkeys(cases))


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory):
    if not os.access(BASH, os.X_OK) or shutil.which("sh") is None:
        pytest.skip("bash is not installed")
    root = tmp_path_factory.mktemp("bash-differential")
    bin_dir = root / "bin"
    bin_dir.mkdir()
    for name in STAND_INS:  # each stand-in only logs its argv
        program = bin_dir / name
        program.write_text(
            "#!/bin/sh\n"
            f"printf '%s{SEP}' \"${{0##*/}}\" \"$@\" > \"$DIFF_LOG/.$$\"\n"  # one file each,
            f"{MV} \"$DIFF_LOG/.$$\" \"$DIFF_LOG/$$\"\n")  # complete when it appears
        program.chmod(0o755)
    work = root / "work"
    work.mkdir()
    bash_dir = bin_dir / "bash"  # `bash -c` inside a line must find bash on this PATH
    bash_dir.symlink_to(BASH)
    (bin_dir / "sh").symlink_to(BASH)  # ... and `sh` (bash in POSIX mode)
    return bin_dir, work


def _executed(text: str, bin_dir: Path, work: Path) -> list[tuple[str, ...]]:
    log = Path(tempfile.mkdtemp(dir=work))  # a late writer (`>(cat)`) cannot reach the next
    env = {"PATH": str(bin_dir), "DIFF_LOG": str(log), "HOME": str(work), "LC_ALL": "C"}
    text = text.replace("/usr/bin/", f"{bin_dir}/")  # a path the line names: a stand-in
    subprocess.run([BASH, "--norc", "--noprofile", "-c", text], cwd=work, env=env,
                   stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, timeout=5, check=False)
    return [tuple(entry.read_text().split(SEP)[:-1]) for entry in log.iterdir()
            if not entry.name.startswith(".")]


CASES = _cases()


def test_generator_covers_enough():
    assert len(CASES) > 200


def test_bash_runs_nothing_the_analysis_missed(sandbox):
    bin_dir, work = sandbox
    misses = []
    for text in CASES:
        analysis = analyse(text)
        if any(c.dynamic for c in analysis.commands):
            continue  # not allowable: whatever bash runs, a rule cannot allow it
        seen = {c.words for c in analysis.commands}
        for argv in _executed(text, bin_dir, work):
            if argv not in seen:
                misses.append((text, argv, sorted(seen)))
    assert not misses, "\n".join(f"{t!r}: bash ran {a}, analysis saw {s}" for t, a, s in misses)


KEPT = [t.format(c=p) for t, bad in KEPT_TEMPLATES for p in PAYLOADS
        if not any(ch in p for ch in bad)]
KEPT += [p.replace(" ", "${IFS}") for p in PAYLOADS] + [p.replace(" ", "$IFS ", 1)
                                                         for p in PAYLOADS]
KEPT += [t.format(p=p.split()[0], a=p.split(" ", 1)[1], a1=p.split()[1], a2=p.split()[2])
         for t in REPOINTING_TEMPLATES for p in PAYLOADS]



def test_bash_runs_nothing_the_deny_rules_miss(sandbox):
    bin_dir, work = sandbox
    misses, silent = [], []
    for text in KEPT:
        analysis = analyse(text)
        seen = {c.words for c in (*analysis.commands, *analysis.speculative)}
        ran = _executed(text, bin_dir, work)
        silent += [] if ran else [text]  # bash ran nothing: the line would test nothing
        for argv in ran:
            if argv not in seen:
                misses.append((text, argv, sorted(seen)))
    assert not misses, "\n".join(f"{t!r}: bash ran {a}, analysis saw {s}" for t, a, s in misses)
    assert not silent
