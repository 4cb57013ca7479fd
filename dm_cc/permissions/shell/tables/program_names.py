"""Other names of a program and of its subcommands, for deny and ask rules.

A command runs under the name it is written with, but the same program answers to
other names: a versioned name (``pip3.11`` is ``pip``), git's dashed form (``git-push``
is ``git push``), a program's own subcommand aliases (``npm rm`` is ``npm uninstall``,
``docker rm`` is ``docker container rm``) and npm's unique-prefix abbreviations. The
judge (:mod:`..names`) reads these tables; a rule that denies or asks about one name
holds for all of them. Beside each entry: where its facts come from.
"""

from __future__ import annotations

from collections.abc import Mapping

from dm_cc.permissions.shell.tables import names, table, words

#: Programs installed under versioned names too (NAME + VERSION, sometimes NAME-VERSION):
#: such a name is also the program's major-version name and its plain name
#: (``python3.11`` -> ``python3``, ``python``). CPython's Makefile (``altbininstall``:
#: ``python$(VERSION)``, ``bininstall``: ``python3``, 3.13's free-threaded ``python3.13t``);
#: pip's wheel installer (pip ``_internal/operations/install/wheel.py``
#: ``get_console_script_specs``: ``pip``, ``pipX``, ``pipX.Y``); Fedora's python3-pip
#: (``pip-3``, ``pip-3.12``); PyPy's ``pypy3``/``pypy3.10``; Debian's ruby3.1, php8.2,
#: lua5.4 packages (``/usr/bin/ruby3.1`` ...); perl's installperl (``perl5.36.0``).
VERSIONED = words("python pip pypy ruby php lua perl")
#: The version part such a name may carry after the program: digits and dots, an
#: optional dash before them, an optional ABI letter (``python3.13t``, ``python3.7m``).
VERSION_SUFFIX = r"-?(\d+)(?:\.\d+)*[a-z]?"

#: A program name that is another program's (the words it amounts to). Debian's nodejs
#: package: ``/usr/bin/nodejs`` is node; Docker Compose v2: the standalone
#: ``docker-compose`` binary is the ``docker compose`` plugin (docs.docker.com,
#: "Install the Compose standalone").
PROGRAM_ALIASES: Mapping[str, tuple[str, ...]] = names(
    ("nodejs", ("node",)),
    ("docker-compose", ("docker", "compose")),
)

#: git runs ``git X`` as the program ``git-X`` when X is not a builtin, and installs every
#: builtin as a link ``git-X`` in its exec-path (git(1) ``--exec-path``; git's Makefile
#: ``BUILT_INS`` in ``$(gitexecdir)``, e.g. /usr/lib/git-core, /usr/libexec/git-core): so
#: ``git-X ARGS`` is ``git X ARGS`` (``/usr/lib/git-core/git-push`` pushes).
DASHED = names(("git", "git-"))

#: git's own commands (``git --list-cmds=main``, git 2.39.5: its builtins and the programs
#: of its exec-path). A word in a subcommand's place that is none of them is an unknown
#: command, which git runs as the command it is most like when ``help.autocorrect`` is set
#: (a positive number, ``immediate``: in the person's config, the repository's, ``-c`` or
#: ``GIT_CONFIG_*``), git ``help.c`` ``help_unknown_cmd``. A git with more commands
#: (git-lfs, newer builtins) only makes fewer words unknown.
GIT_COMMANDS = words(
    "add add--interactive am annotate apply archive bisect bisect--helper blame branch"
    " bugreport bundle cat-file check-attr check-ignore check-mailmap check-ref-format"
    " checkout checkout--worker checkout-index cherry cherry-pick clean clone column"
    " commit commit-graph commit-tree config count-objects credential credential-cache"
    " credential-cache--daemon credential-store daemon describe diagnose diff diff-files"
    " diff-index diff-tree difftool difftool--helper env--helper fast-export fast-import"
    " fetch fetch-pack filter-branch fmt-merge-msg for-each-ref for-each-repo format-patch"
    " fsck fsck-objects fsmonitor--daemon gc get-tar-commit-id grep hash-object help hook"
    " http-backend http-fetch http-push imap-send index-pack init init-db instaweb"
    " interpret-trailers log ls-files ls-remote ls-tree mailinfo mailsplit maintenance"
    " merge merge-base merge-file merge-index merge-octopus merge-one-file merge-ours"
    " merge-recursive merge-recursive-ours merge-recursive-theirs merge-resolve"
    " merge-subtree merge-tree mergetool mktag mktree multi-pack-index mv name-rev notes"
    " pack-objects pack-redundant pack-refs patch-id pickaxe prune prune-packed pull push"
    " quiltimport range-diff read-tree rebase receive-pack reflog remote remote-ext"
    " remote-fd remote-ftp remote-ftps remote-http remote-https repack replace"
    " request-pull rerere reset restore rev-list rev-parse revert rm send-pack"
    " sh-i18n--envsubst shell shortlog show show-branch show-index show-ref"
    " sparse-checkout stage stash status stripspace submodule submodule--helper subtree"
    " switch symbolic-ref tag unpack-file unpack-objects update-index update-ref"
    " update-server-info upload-archive upload-archive--writer upload-pack var"
    " verify-commit verify-pack verify-tag version web--browse whatchanged worktree"
    " write-tree")
#: The weights git gives the edits of a mistyped command (``help.c``: ``levenshtein(cmd,
#: candidate, 0, 2, 1, 3)``: a swap, a substitution, an insertion, a deletion), and the
#: score from which a command is no longer similar enough to be run (``SIMILARITY_FLOOR``).
GIT_EDIT_WEIGHTS = (0, 2, 1, 3)
GIT_SIMILARITY_FLOOR = 7

#: npm's commands and aliases, from npm/cli ``lib/utils/cmd-list.js`` (npm 11): npm
#: resolves a word (``deref``) as a command, else an alias, else -- camelCase turned into
#: dashes first -- a unique prefix of a command or alias (``abbrev``), then its alias.
NPM_COMMANDS = words(
    "access approve-scripts audit bugs cache ci completion config dedupe deny-scripts"
    " deprecate diff dist-tag docs doctor edit exec explain explore find-dupes fund get help"
    " help-search init install install-ci-test install-test link ll login logout ls org"
    " outdated owner pack ping pkg prefix profile prune publish query rebuild repo restart"
    " root run sbom search set stage start stop team test token trust undeprecate uninstall"
    " unpublish update version view whoami")
NPM_ALIASES: Mapping[str, str] = names(
    ("author", "owner"), ("home", "docs"), ("issues", "bugs"), ("info show v", "view"),
    ("find s se", "search"),
    ("add i in ins inst insta instal isnt isnta isntal isntall", "install"),
    ("unlink remove rm r un", "uninstall"), ("rb", "rebuild"), ("list", "ls"),
    ("ln", "link"), ("create innit", "init"), ("it", "install-test"),
    ("cit clean-install-test sit", "install-ci-test"), ("u up upgrade udpate", "update"),
    ("c", "config"), ("tst t", "test"), ("ddp", "dedupe"), ("run-script rum urn", "run"),
    ("clean-install ic install-clean isntall-clean", "ci"), ("x", "exec"),
    ("why", "explain"), ("la", "ll"), ("verison", "version"), ("hlep", "help"),
    ("dist-tags", "dist-tag"), ("ogr", "org"),
)

#: Subcommand aliases a program documents (each group: the names of one subcommand, the
#: first as the program's reference names it). pnpm.io/cli (pnpm 9/10: each page's
#: "Aliases:"); the Cargo Book, "Configuration: [alias]" (built-in ``b c d t r rm``);
#: the docker CLI reference (each command's "Aliases:", docker 24-27) and podman(1)
#: (podman-container(1): the same management commands and short forms).
_DOCKER = (
    ("container rm", "container remove", "rm"), ("container run", "run"),
    ("container exec", "exec"), ("container ls", "container list", "container ps", "ps"),
    ("container kill", "kill"), ("container stop", "stop"), ("container start", "start"),
    ("container restart", "restart"), ("container create", "create"),
    ("container cp", "cp"), ("container commit", "commit"), ("container attach", "attach"),
    ("container logs", "logs"), ("container pause", "pause"),
    ("container unpause", "unpause"), ("container rename", "rename"),
    ("container update", "update"), ("container wait", "wait"),
    ("container export", "export"), ("container top", "top"), ("container port", "port"),
    ("container diff", "diff"), ("container stats", "stats"),
    ("image rm", "image remove", "rmi"), ("image ls", "image list", "images"),
    ("image push", "push"), ("image pull", "pull"), ("image build", "build", "builder build"),
    ("image tag", "tag"), ("image save", "save"), ("image load", "load"),
    ("image import", "import"), ("image history", "history"),
    ("volume rm", "volume remove"), ("network rm", "network remove"),
)
SUBCOMMAND_GROUPS: tuple[tuple[str, tuple[tuple[str, ...], ...]], ...] = (
    ("pnpm", (("install", "i"), ("remove", "rm", "uninstall", "un"),
              ("update", "up", "upgrade"), ("list", "ls"), ("test", "t", "tst"),
              ("run", "run-script"), ("link", "ln"), ("unlink", "dislink"),
              ("rebuild", "rb"), ("install-test", "it"))),
    ("cargo", (("build", "b"), ("check", "c"), ("doc", "d"), ("test", "t"), ("run", "r"),
               ("remove", "rm"))),
    ("docker", _DOCKER),
    ("podman", _DOCKER),
)


def _subcommand_table() -> Mapping[tuple[str, ...], tuple[tuple[str, ...], ...]]:
    """(program, *subcommand words) -> every name of that subcommand, as full words."""
    entries = []
    for program, groups in SUBCOMMAND_GROUPS:
        for group in groups:
            spelled = tuple((program, *name.split()) for name in group)
            entries += [(" ".join(key), spelled) for key in spelled]
    return table(*entries)


#: Every spelling of a documented subcommand -> all its spellings (``docker rm`` ->
#: ``docker container rm``, ``docker container remove``, ``docker rm``).
SUBCOMMAND_NAMES = _subcommand_table()
