"""Programs that may leave symlinks (or hard links) where they write, under names the line
does not show: an archive's members, a patch's new files, a checkout, a recursive copy.

After such a command, a later path of the same line under where it wrote may lead
anywhere (``tar xf a.tar && cat link/id_rsa``, the archive holding ``link -> ~/.ssh``), so
the judge takes it for an unknown target (:meth:`~..judge.Judge.plant`). ``PLANTERS`` maps
a program's leading words to a :class:`Plants`: where its new entries land. Beside each
entry: where the fact comes from (checked in bash 5.2 with a harmless archive, patch or
copy where the program is installed).
"""

# No `from __future__ import annotations` here: NamedTuple classes build about twice as
# fast with evaluated annotations, and this module is imported at start-up.

from typing import Literal, NamedTuple

from dm_cc.permissions.shell.tables import table, words

_NONE: frozenset[str] = frozenset()


class Plants(NamedTuple):
    """Where a program's new entries land.

    into: "here" (the working directory), "last" (the last operand: a copy's destination),
    "operand" (the positional ``operand``, else ``default``, else here), "nowhere" (this
    form writes nothing: ``git stash list``).
    directory: options whose value is the directory instead (``tar -C DIR``, ``unzip -d``).
    modes: it plants only with one of these options (``tar -x``); none: always.
    listing: it plants nothing with one of these (``unzip -l``, ``git apply --check``).
    repository: it may write the repository's own files (``.git/config``) when it writes
    into the working directory: git commands never do (git refuses a ``.git`` path
    component in a tree or patch), an archive or a copy may.
    """

    into: Literal["here", "last", "operand", "nowhere"]
    directory: frozenset[str] = _NONE
    modes: frozenset[str] = _NONE
    listing: frozenset[str] = _NONE
    repository: bool = True
    operand: int = 0
    default: str | None = None


_HERE = Plants("here")
_GIT = Plants("here", repository=False)
_NOWHERE = Plants("nowhere")

PLANTERS = table(
    # GNU tar 1.34 tar(1): -x/--extract/--get restores members as archived, symlinks and
    # hard links included, under -C DIR (checked: `tar xf a.tar && cat link/x` follows
    # the archived link); bsdtar(1) (libarchive 3.6) likewise.
    ("tar, gtar, bsdtar", Plants("here", words("-C --directory"), words("-x --extract --get"))),
    # unzip(1) (Info-ZIP 6.0): restores symlinks on Unix (checked), under -d DIR; -l, -v,
    # -t, -Z list and -p, -c print to stdout.
    ("unzip", Plants("here", words("-d"), listing=words("-l -v -t -Z -z -p -c"))),
    # cpio(1) (GNU cpio 2.13): -i/--extract restores symlinks, under -D/--directory.
    ("cpio", Plants("here", words("-D --directory"), words("-i --extract"))),
    # pax(1) (POSIX): -r reads an archive into the working directory.
    ("pax", Plants("here", modes=words("-r"))),
    # 7z(1) (p7zip 16.02) x/e extract (symlinks too); the output dir is glued (-oDIR).
    ("7z x, 7z e, 7za x, 7za e, 7zr x, 7zr e, 7zz x, 7zz e, unrar x, unrar e", _HERE),
    # dpkg-deb(1): -x/-R ARCHIVE DIR extracts the package's tree (symlinks included).
    ("dpkg-deb, dpkg", Plants("operand", modes=words("-x --extract -X --vextract -R"
                                                     " --raw-extract"), operand=1)),
    # unsquashfs(1) (squashfs-tools 4.5): into -d DIR, else squashfs-root here.
    ("unsquashfs", Plants("here", words("-d -dest"))),
    # patch(1) (GNU patch 2.7): a git-style diff creates symlinks (mode 120000; checked),
    # under -d/--directory.
    ("patch", Plants("here", words("-d --directory"))),
    # git (2.39): these write the work tree from history or a patch, and history may hold
    # symlinks (mode 120000): apply, am, checkout, switch, restore, reset --hard, merge,
    # pull, rebase, cherry-pick, revert, stash, bisect, read-tree -u, checkout-index,
    # sparse-checkout, submodule, worktree add, clone (into DIR, else a name from the
    # URL), init (into DIR).
    ("git apply", Plants("here", listing=words("--check --stat --numstat --summary"),
                         repository=False)),
    ("git am, git checkout, git switch, git restore, git merge, git pull, git rebase,"
     " git cherry-pick, git revert, git stash, git stash pop, git stash apply,"
     " git stash branch, git bisect, git checkout-index, git sparse-checkout,"
     " git submodule", _GIT),
    ("git stash list, git stash show", _NOWHERE),
    ("git reset", Plants("here", modes=words("--hard --merge --keep"), repository=False)),
    ("git read-tree", Plants("here", modes=words("-u"), repository=False)),
    ("git worktree add", Plants("operand", repository=False)),
    ("git clone", Plants("operand", operand=1, repository=False)),
    ("git init", Plants("operand", default=".git", repository=False)),
    # coreutils 9.1 cp(1): -R without -L copies symlinks as symlinks (-a, -d, -P too);
    # mv(1) moves them; rsync(1) -l/-a recreates them (their destination: the last operand,
    # or -t DIR).
    ("cp", Plants("last", words("-t --target-directory"),
                  words("-a -r -R -d -P --archive --recursive --no-dereference"))),
    ("mv", Plants("last", words("-t --target-directory"))),
    ("rsync", Plants("last")),
)
