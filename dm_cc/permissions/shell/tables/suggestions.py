"""What an "always allow" suggestion keeps of a command (docs/shell.md, "Always allow"
suggestions): how many leading words (``git commit -m x`` -> ``git commit *``, ``npm run
dev`` -> ``npm run dev *``; unknown programs keep one), which commands are remembered
exactly (``rm -rf build``), and how an interpreter's options read before the program it
runs (``python3 -u manage.py x`` -> ``python3 -u manage.py *``).

The counts follow each tool's command structure (``git help -a``, ``npm help``,
``docker --help``, ``kubectl --help``, ``gh help``, ``aws help`` ...): a program with
subcommands keeps its subcommand; one with subcommand groups, or a runner of named
scripts, keeps one word more.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

from dm_cc.permissions.shell.tables import names, table, words
from dm_cc.permissions.shell.tables.interpreters import NOT_SH_SHELLS, SHELL_VALUE_OPTS, SHELLS

#: Leading words -> how many words an "always allow" suggestion keeps.
ARITY: Mapping[tuple[str, ...], int] = table(
    # programs with subcommands: keep the subcommand
    ("git, npm, pnpm, yarn, bun, npx, bunx, cargo, go, docker, docker-compose, podman,"
     " kubectl, helm, pip, pip3, uv, poetry, pdm, hatch, rye, make, terraform, tofu, dotnet,"
     " mvn, gradle, gradlew, brew, apt, apt-get, dnf, yum, pacman, systemctl, journalctl,"
     " rustup, deno, just, nx, turbo, bundle, rails, rake, mix, composer, conda, mamba,"
     " swift, flutter, dart, pixi, nix, gem, cabal, stack, opam, ansible-galaxy, minikube,"
     " kind, vercel, netlify, wrangler, firebase, heroku, flyctl, fly", 2),
    # cloud CLIs: service then action
    ("gh, aws, az, gcloud, glab", 3),
    # script runners: the script's name
    ("npm run, pnpm run, yarn run, bun run, uv run, poetry run, pdm run, hatch run", 3),
    ("python -m, python3 -m, py -m", 3),
    # subcommand groups
    ("docker compose, docker image, docker container, docker volume, docker network,"
     " docker system, docker buildx, docker context, docker builder", 3),
    ("git stash, git remote, git submodule, git worktree, git bisect, git notes, git lfs,"
     " git sparse-checkout", 3),
    ("kubectl config, kubectl rollout, kubectl auth, kubectl certificate", 3),
    ("go mod, go tool, cargo +nightly, uv pip, uv tool, terraform state, terraform workspace,"
     " npm exec, pnpm exec, pnpm dlx, yarn dlx, dotnet ef, poetry env", 3),
    ("yarn workspace", 4),  # yarn workspace NAME SCRIPT
    ("R CMD", 4),           # R CMD BATCH FILE (R(1): R CMD command args)
)

#: Commands "always" remembers exactly as asked, whatever their arguments (value: why):
#: a prefix of one would also allow the next run that removes, overwrites or publishes
#: something else (``rm *`` after ``rm -rf build``).
EXACT: Mapping[tuple[str, ...], str] = table(
    # coreutils(1) 9.x and util-linux 2.39: remove, overwrite, move, re-own or re-mode
    ("rm, rmdir, unlink, shred, truncate, mv, dd, chmod, chown, chgrp, chattr, setfacl, install,"
     " ln, mkfs, mkfs.ext2, mkfs.ext3, mkfs.ext4, mkfs.xfs, mkfs.btrfs, mkfs.vfat, mkfs.fat,"
     " mkfs.exfat, mkfs.ntfs, mke2fs, mkswap, wipefs, fdisk, sfdisk, parted, blkdiscard",
     "removes, overwrites or re-owns files"),
    # kill(1), pkill(1), killall(1) (procps-ng 4, psmisc 23)
    ("kill, pkill, killall, skill, xkill", "stops processes"),
    # git-push(1), git-reset(1) --hard, git-clean(1), git-restore(1),
    # git-rm(1), git-filter-branch(1), git-update-ref(1), git-reflog(1) expire/delete,
    # git-prune(1) (git 2.39)
    ("git push, git reset, git clean, git restore, git rm, git filter-branch, git filter-repo,"
     " git update-ref, git reflog expire, git reflog delete, git prune",
     "discards work or rewrites history"),
    # docker(1) / podman(1) rm, rmi, prune; kubectl-delete(1); helm uninstall;
    # terraform destroy; publishing a package is forever (npm-publish(1), cargo-publish(1))
    ("docker rm, docker rmi, docker kill, docker system prune, docker volume rm,"
     " docker volume prune, docker container rm, docker container prune, docker container kill,"
     " docker image rm, docker image prune, podman rm, podman rmi, podman kill,"
     " kubectl delete, kubectl drain,"
     " helm uninstall, helm delete, terraform destroy, tofu destroy",
     "removes containers, images or deployed resources"),
    ("npm publish, npm unpublish, pnpm publish, yarn publish, cargo publish, twine upload,"
     " gem push, gh release delete, gh repo delete", "publishes or deletes something others see"),
)


class RunnerOptions(NamedTuple):
    """How an interpreter's options read before the program it runs (the script, or a
    module): ``flags`` take no value, ``valued`` take the next word (or the rest of a
    cluster) as their value, ``program`` name the program in theirs (``-m MODULE``).
    ``clusters``: single-letter options combine (``-uB``, ``-Wignore``), as getopt reads
    them. Only ``flags`` must be exact -- an option that takes a value read as a flag
    would make its value look like the program; an option in no set, or an option of an
    interpreter not listed here, makes the suggestion the exact command.
    The options that give the code inline are :data:`..interpreters.INLINE_CODE_BY_FAMILY`'s."""

    flags: frozenset[str] = frozenset()
    valued: frozenset[str] = frozenset()
    program: frozenset[str] = frozenset()
    clusters: bool = False


#: By interpreter family (the name without version digits). Sources: python(1) 3.12
#: "COMMAND LINE OPTIONS"; perlrun(1) 5.36 (-l, -0, -i, -x, -F, -C, -d, -D take an
#: attached value read their own way: not listed, so exact); ruby(1) 3.2; node(1) v20
#: `node --help` (no clusters; a V8 option's value comes after ``=``); deno 2 `deno run
#: --help` (permission flags take their list after ``=``); php(1) 8.2.
RUNNER_OPTIONS: Mapping[str, RunnerOptions] = names(
    ("python pypy", RunnerOptions(
        flags=words("-b -B -d -E -h -i -I -O -P -q -R -s -S -u -v -V -x -bb -OO -vv -VV"
                    " --help --version --help-env --help-xoptions --help-all"),
        valued=words("-W -X --check-hash-based-pycs"), program=words("-m"), clusters=True)),
    ("perl", RunnerOptions(
        flags=words("-a -c -n -p -s -S -t -T -u -U -w -W -X -h -v"),
        valued=words("-I -M -m"), clusters=True)),
    ("ruby", RunnerOptions(
        flags=words("-a -c -d -l -n -p -s -S -v -w -y -h --verbose --version --help --yjit"
                    " --jit --disable-gems"),
        valued=words("-I -r -C -E"), clusters=True)),
    ("node nodejs", RunnerOptions(
        flags=words("--inspect --inspect-brk --inspect-wait --enable-source-maps"
                    " --trace-warnings --trace-deprecation --trace-uncaught --trace-exit"
                    " --no-warnings --no-deprecation --throw-deprecation --pending-deprecation"
                    " --watch --watch-preserve-output --expose-gc --abort-on-uncaught-exception"
                    " --preserve-symlinks --preserve-symlinks-main --experimental-vm-modules"
                    " --experimental-strip-types --experimental-transform-types --jitless"
                    " --no-addons --frozen-intrinsics --use-strict --prof --cpu-prof --heap-prof"),
        valued=words("-r --require --import --loader --experimental-loader -C --conditions"
                     " --env-file --input-type --title"))),
    ("deno", RunnerOptions(
        flags=words("-A --allow-all --allow-read --allow-write --allow-net --allow-env"
                    " --allow-run --allow-sys --allow-ffi --allow-import --allow-hrtime -q"
                    " --quiet --watch --check --no-check --reload -r --no-prompt --unstable"
                    " --no-lock --no-npm --no-remote --cached-only --inspect --inspect-brk"
                    " --inspect-wait"),
        valued=words("-c --config --import-map --lock --cert --log-level --location --seed"))),
    ("php", RunnerOptions(
        flags=words("-n -q -H -e -l -s -w -a -i -m -v -h"),
        valued=words("-c -d -z -t"), program=words("-f"), clusters=False)),
)

#: Shells whose options read as bash(1) 5.2 reads them ("OPTIONS", "INVOCATION" and the
#: ``set`` letters; dash(1), ksh(1), mksh(1), zsh(1) take -c, -s, -o the same way): a
#: cluster of these letters takes no value, ``o``/``O`` each take the next word, ``c``
#: gives the code inline, ``s`` reads stdin. The other shells (fish, csh, tcsh): no
#: option is read (the exact command).
SH_FAMILY = SHELLS - NOT_SH_SHELLS
SH_FLAG_LETTERS = frozenset("abefhkmnptuvxBCEHPTilrD")
SH_LONG_FLAGS = words("--login --noprofile --norc --posix --restricted --verbose --version"
                      " --help --noediting --debugger --dump-strings --dump-po-strings")
SH_VALUE_LONG = frozenset(o for o in SHELL_VALUE_OPTS if o.startswith("--"))
