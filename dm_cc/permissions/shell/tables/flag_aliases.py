"""Long/short spellings of the same flag, so a ``deny``/``ask`` rule written with one
spelling catches the others (``rm -rf *`` also catches ``rm --recursive --force x``).

Per command: option spelling -> canonical spellings (several when one implies others,
``git branch -D`` = ``-d -f``, ``cp -a`` = ``-a -r`` (-a is -dR --preserve=all)); a
spelling with a value (``rm --interactive=never``, npm's ``--location=global``) means
the flag it amounts to. From each program's man page, checked against GNU
coreutils 9.1 (rm, cp, mv, ln, chmod, chown, chgrp, shred, dd), git 2.39 (git-push,
git-clean, git-reset, git-checkout (its --discard-changes is documented for git-switch
only), git-switch, git-branch, git-commit, git-rebase, git-stash, git-tag, git-restore),
GNU sed 4.9, curl 7.88 and GNU tar 1.34; and from the docker (rm, rmi, system/volume
prune), kubectl (delete), npm (install, publish) and pip (install) CLI references.
"""

from __future__ import annotations

from collections.abc import Mapping

from dm_cc.permissions.shell.tables import names, table, words
from dm_cc.permissions.shell.tables.program_names import NPM_ALIASES, SUBCOMMAND_GROUPS

#: Commands whose options are whole words even with a single dash (``find -exec``,
#: ``java -jar``, ``gcc -shared``, ``ffmpeg -i``, ``openssl -in``, ``go -exec``,
#: ``sqlite3 -cmd``, ``emacs -eval``). Here, with the flags' other spellings, not with
#: the argument specs: reading a flag rule needs it, and not the specs' big table.
SINGLE_DASH_LONG = words("find java javac gcc g++ clang clang++ cc c++ ffmpeg xcodebuild openssl"
                         " gcc-12 gcc-13 gcc-14 g++-12 g++-13 g++-14 clang-14 clang-15"
                         " clang-16 clang-17 clang-18 c89 c99 tcc icx icpx"
                         " go sqlite3 emacs terraform tofu")


def _aliases(*groups: tuple[str, str]) -> Mapping[str, tuple[str, ...]]:
    """``("-R --recursive", "-r")``: these spellings mean ``-r`` (a spelling given twice
    raises)."""
    return names(*((spellings, tuple(canonical.split())) for spellings, canonical in groups))


_RM = _aliases(("-R --recursive", "-r"), ("--force --interactive=never", "-f"), ("--dir", "-d"),
               ("--interactive", "-i"), ("--verbose", "-v"),
               ("--no-preserve-root", "--no-preserve-root"))
_RECURSIVE = _aliases(("--recursive", "-R"), ("--verbose", "-v"), ("--changes", "-c"),
                      ("--silent --quiet", "-f"))

FLAG_ALIASES: Mapping[tuple[str, ...], Mapping[str, tuple[str, ...]]] = table(
    ("rm", _RM),
    ("cp", _aliases(("-R --recursive", "-r"), ("--force", "-f"), ("-a --archive", "-a -r"),
                    ("--no-clobber", "-n"), ("--interactive", "-i"), ("--link", "-l"),
                    ("--symbolic-link", "-s"), ("--update", "-u"))),
    ("mv", _aliases(("--force", "-f"), ("--no-clobber", "-n"), ("--interactive", "-i"),
                    ("--update", "-u"))),
    ("ln", _aliases(("--force", "-f"), ("--symbolic", "-s"), ("--no-dereference", "-n"))),
    ("chmod, chown, chgrp", _RECURSIVE),
    ("git push", _aliases(("--force", "-f"), ("--delete", "-d"), ("--all", "--all"),
                          ("--mirror", "--mirror"), ("--prune", "--prune"), ("--tags", "--tags"),
                          ("--force-with-lease", "--force-with-lease"),
                          ("--force-if-includes", "--force-if-includes"),
                          ("--no-verify", "--no-verify"), ("--set-upstream", "-u"),
                          ("--dry-run", "-n"))),
    ("git clean", _aliases(("--force", "-f"), ("--dry-run", "-n"), ("--quiet", "-q"),
                           ("--interactive", "-i"), ("--exclude", "-e"))),
    ("git reset", _aliases(("--hard", "--hard"), ("--soft", "--soft"), ("--mixed", "--mixed"),
                           ("--merge", "--merge"), ("--keep", "--keep"))),
    ("git checkout", _aliases(("--force --discard-changes", "-f"))),
    ("git switch", _aliases(("--force --discard-changes", "-f"), ("--create", "-c"),
                            ("--force-create", "-C"))),
    ("git branch", _aliases(("--delete", "-d"), ("-D", "-d -f"), ("--force", "-f"),
                            ("--move", "-m"), ("-M", "-m -f"), ("--copy", "-c"),
                            ("-C", "-c -f"))),
    ("git commit", _aliases(("--amend", "--amend"), ("--no-verify", "-n"), ("--all", "-a"),
                            ("--message", "-m"))),
    ("git rebase", _aliases(("--interactive", "-i"), ("--exec", "-x"), ("--root", "--root"))),
    ("git stash", _aliases(("--include-untracked", "-u"), ("--all", "-a"))),
    ("git tag", _aliases(("--delete", "-d"), ("--force", "-f"))),
    ("git restore", _aliases(("--staged", "-S"), ("--worktree", "-W"), ("--source", "-s"))),
    ("docker rm", _aliases(("--force", "-f"), ("--volumes", "-v"))),
    ("docker rmi", _aliases(("--force", "-f"))),
    ("docker system prune", _aliases(("--all", "-a"), ("--force", "-f"),
                                     ("--volumes", "--volumes"))),
    ("docker volume prune", _aliases(("--all", "-a"), ("--force", "-f"))),
    ("kubectl delete", _aliases(("--all", "--all"), ("--force", "--force"),
                                ("--recursive", "-R"), ("--filename", "-f"))),
    ("npm install", _aliases(("--global --location=global", "-g"), ("--force", "-f"),
                             ("--save-dev", "-D"))),
    ("npm publish", _aliases(("--force", "-f"))),
    ("sed", _aliases(("--in-place", "-i"), ("--expression", "-e"),
                     ("--regexp-extended -r", "-E"), ("--quiet --silent", "-n"))),
    ("curl", _aliases(("--output", "-o"), ("--remote-name", "-O"), ("--insecure", "-k"),
                      ("--location", "-L"), ("--data", "-d"), ("--request", "-X"),
                      ("--upload-file", "-T"), ("--config", "-K"))),
    ("tar", _aliases(("--create", "-c"), ("--extract --get", "-x"), ("--file", "-f"),
                     ("--gzip", "-z"), ("--verbose", "-v"), ("--list", "-t"),
                     ("--absolute-names", "-P"))),
    ("dd", _aliases()),
    ("shred", _aliases(("--remove", "-u"), ("--zero", "-z"), ("--force", "-f"),
                       ("--iterations", "-n"))),
    ("pip", _aliases(("--upgrade", "-U"), ("--user", "--user"), ("--requirement", "-r"))),
    ("pip install", _aliases(("--upgrade", "-U"), ("--requirement", "-r"), ("--editable", "-e"),
                             ("--break-system-packages", "--break-system-packages"))),
)
#: Positional words that imply a flag: (command) -> ((prefix, canonical flag), ...).
#: git-push(1): ``git push origin +main`` is a force push; ``git push origin :main`` deletes.
POSITIONAL_FLAGS: Mapping[tuple[str, ...], tuple[tuple[str, str], ...]] = table(
    ("git push", (("+", "-f"), (":", "-d"))),
)

def _command_aliases() -> Mapping[tuple[str, ...], tuple[str, ...]]:
    """Other spellings of a command's leading words, for deny/ask flag rules: (words) ->
    the words a rule names, from the names table (:mod:`.program_names`: npm's aliases,
    the subcommand aliases pnpm, cargo, docker and podman document). A subcommand's
    spellings all become the one this module has flag spellings for (``docker container
    rm`` is ``docker rm``), else the first the program's reference gives. (``python -m
    pip`` is offered to deny rules as ``pip`` by the judge.)"""
    entries: list[tuple[str, tuple[str, ...]]] = [
        (f"npm {alias}", ("npm", command)) for alias, command in NPM_ALIASES.items()]
    for program, groups in SUBCOMMAND_GROUPS:
        for group in groups:
            spelled = [(program, *name.split()) for name in group]
            canonical = next((s for s in spelled if s in FLAG_ALIASES), spelled[0])
            entries += [(" ".join(s), canonical) for s in spelled if s != canonical]
    return table(*entries)


COMMAND_ALIASES: Mapping[tuple[str, ...], tuple[str, ...]] = _command_aliases()
