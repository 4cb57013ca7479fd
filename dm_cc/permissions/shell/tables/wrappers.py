"""Wrappers: programs that run another command, and how to find it among their words.

``WRAPPERS`` maps a wrapper's leading words (``sudo``, ``uv run``, ``docker compose exec``)
to a :class:`Wrapper`: which of its options take values, which run a script, where the
wrapped command starts. Option letters are written as on the command line. Each group
names the documentation its options come from.
"""

# No `from __future__ import annotations` here: NamedTuple classes build about twice as
# fast with evaluated annotations, and this module is imported at start-up.

from collections.abc import Mapping
from typing import Literal, NamedTuple

from dm_cc.permissions.shell.tables import table, words

Rest = Literal["command", "script", "scripts", "none", "dashdash", "shell-args"]
_NONE: frozenset[str] = frozenset()


class Wrapper(NamedTuple):
    """How a wrapper's words after its name are laid out.

    value_opts / pair_opts: options taking one / two separate value words.
    optional_opts: options whose value, if any, is attached (``-i{}``, ``--color=x``).
    string_opts: options whose value is a shell script (``su -c``, ``flock -c``, ``env -S``).
    command_opts: options after which every remaining word is the command (``nix develop -c``).
    command_flags: flags that switch ``rest`` to "command" (``watch -x``, ``runuser -u``;
      for a "none" wrapper the command is what follows ``--`` or the first positional).
    query_opts: options that mean no command runs (``command -v``, ``taskset -p``).
    positionals: words consumed after the options and before the command (``timeout 5``).
    rest: what follows -- "command" (words of a command), "script" (words joined by spaces and
      parsed as shell, like ssh and watch), "scripts" (each word is a script), "none", or
      "dashdash" (the command follows ``--``; without ``--`` treated like "command"), or
      "shell-args" (the words after ``--`` are a shell's arguments: ``capsh -- -c CMD``).
    assignments: ``NAME=VALUE`` words may precede the command (env, sudo).
    lone_dash: a bare ``-`` is an option (``env -``, ``su -``), not the command.
    stop_words: words that end the command (``parallel ... ::: args``).
    chdir_opts: options naming the directory the command runs in (``env -C DIR``; also
      as a global option between the key words: ``pnpm -C DIR exec``).
    home_opts: options after which the command runs in the target user's home directory
      (``sudo -i``): relative paths lead somewhere unknown here.
    env_opts: options whose value is NAME=VALUE (``systemd-run -E``, ``run0 --setenv``).
    reopts: options may also follow the positionals (``ssh host -t CMD``).
    program_opts: options whose value names the program the rest runs as
      (``coreutils --coreutils-prog=rm -rf x`` is ``rm -rf x``).
    stdin_args: the words of stdin are appended to the command (``xargs cat <<< FILE``:
      a static heredoc or here-string is known; the rest cannot be).
    """

    value_opts: frozenset[str] = _NONE
    pair_opts: frozenset[str] = _NONE
    optional_opts: frozenset[str] = _NONE
    string_opts: frozenset[str] = _NONE
    command_opts: frozenset[str] = _NONE
    command_flags: frozenset[str] = _NONE
    query_opts: frozenset[str] = _NONE
    positionals: int = 0
    rest: Rest = "command"
    assignments: bool = False
    lone_dash: bool = False
    stop_words: frozenset[str] = _NONE
    chdir_opts: frozenset[str] = _NONE
    home_opts: frozenset[str] = _NONE
    env_opts: frozenset[str] = _NONE
    reopts: bool = False
    program_opts: frozenset[str] = _NONE
    stdin_args: bool = False


def _w(values: str = "", **kw: object) -> Wrapper:
    """A Wrapper; ``values`` are its value options, other word-set fields are strings."""
    conv = {k: words(v) if isinstance(v, str) and k.endswith(("opts", "flags", "words")) else v
            for k, v in kw.items()}
    return Wrapper(words(values), **conv)  # type: ignore[arg-type]


_RUNNER = _w()
_DASHDASH = _w(rest="dashdash")
#: ssh(1) (OpenSSH): options taking an argument, from its SYNOPSIS. Shared with the ssh
#: ArgSpec (:mod:`.arguments`).
SSH_VALUE_OPTS = "-b -c -D -E -e -F -I -i -J -L -l -m -O -o -p -Q -R -S -W -w -B"

# docker-run(1)/podman-run(1) and docker-exec(1) (docker 28; the run list is the union with
# podman's): options taking a value; the container (image) is the one positional before
# the command.
_DOCKER_EXEC = _w("-e --env --env-file -u --user -w --workdir --detach-keys", positionals=1)
_DOCKER_RUN = _w(
    "-e --env --env-file -u --user -w --workdir -v --volume -p --publish --name --network"
    " --net -l --label --entrypoint --mount --platform -h --hostname --add-host --cap-add"
    " --cap-drop --cpus -m --memory --restart --pull --runtime --security-opt --tmpfs"
    " --ulimit --gpus --device --dns --ipc --pid --log-driver --log-opt --shm-size"
    " --cidfile --expose --group-add --health-cmd --stop-signal --label-file --link"
    " -a --attach --cpuset-cpus --cpuset-mems --sysctl --volumes-from --userns --uts"
    " --cgroupns --cgroup-parent -c --cpu-shares --cpu-period --cpu-quota --cpu-rt-period"
    " --cpu-rt-runtime --blkio-weight --blkio-weight-device --device-read-bps"
    " --device-write-bps --device-read-iops --device-write-iops --device-cgroup-rule"
    " --dns-option --dns-search --domainname --health-interval --health-retries"
    " --health-timeout --health-start-period --health-start-interval --ip --ip6 --isolation"
    " --kernel-memory --link-local-ip --mac-address --memory-reservation --memory-swap"
    " --memory-swappiness --network-alias --oom-score-adj --pids-limit --storage-opt"
    " --stop-timeout --annotation --detach-keys --cpu-count --cpu-percent --pod --arch --os"
    " --uidmap --gidmap --secret --tz --umask --unsetenv --pidfile --env-merge"
    " --subuidname --subgidname --requires --seccomp-policy --hooks-dir --decryption-key",
    positionals=1,
)
# docker compose run/exec (Compose v2 reference): the service is the positional.
_COMPOSE_RUN = _w("-e --env -u --user -w --workdir --entrypoint --name -p --publish -v"
                  " --volume -l --label --index", positionals=1)
# kubectl exec (kubectl reference; `oc exec` is the same): POD [-c CONTAINER] -- COMMAND.
_KUBE_EXEC = _w("-c --container -n --namespace --context -f --filename --kubeconfig"
                " --pod-running-timeout -l --selector --cluster --user -s --server",
                positionals=1, rest="dashdash")
# npm-exec(1): --package, --workspace; -c/--call runs a string in a shell.
_NPX = _w("-p --package -w --workspace", string_opts="-c --call")
# uv run / uvx / uv tool run (uv's CLI reference): options taking a value.
_UV_RUN = _w(
    "--with --with-editable --with-requirements -p --python --directory --project --package"
    " --extra --group --only-group --no-group --env-file --index --default-index --index-url"
    " --extra-index-url -f --find-links --cache-dir --config-file --from -C --config-setting"
    " --python-platform --exclude-newer --prerelease --resolution --index-strategy"
    " --keyring-provider --refresh-package --reinstall-package --upgrade-package -P",
    chdir_opts="--directory",  # uv: "--directory: change to the given directory"
)
# conda run (conda 23+ `conda run --help`; mamba and micromamba take the same).
_CONDA = _w("-n --name -p --prefix --cwd", chdir_opts="--cwd")
#: tmux(1) 3.3 new-session/new-window/split-window/run-shell/respawn-*/display-popup:
#: options taking a value (the union; -d is a flag), then a shell command.
_TMUX_NEW = _w("-s -n -c -t -x -y -e -F -f -l", rest="script")
_TMUX_SEND = _w("-t -N", rest="script")
_MISE_EXEC = _w("-C --cd -j --jobs", rest="dashdash", chdir_opts="-C --cd")

#: Wrappers that start a shell reading its script from stdin when given no command
#: (``sudo -s <<< CMD``, ``su - root <<EOF``, ``ssh host <<< CMD``, ``script -q /dev/null``):
#: sudo(8) -s/-i, doas(1) -s, su(1), runuser(1), ssh(1), script(1), run0(1), pkexec(1),
#: machinectl(1) shell, sg(1), newgrp(1), at(1)/batch(1) (at 3.2: the job is read from
#: stdin unless -f FILE), rsh(1).
STDIN_SHELL_WRAPPERS = words("sudo doas su runuser ssh script run0 pkexec machinectl sg newgrp"
                             " at batch rsh")

WRAPPERS: Mapping[tuple[str, ...], Wrapper] = table(
    # --- privileges. sudo(8): -D/--chdir, -u/-g/-h/-p/-r/-t/-U/-T/-R/-C take a
    # value; -l/-v/-K/-V/-e run nothing; VAR=value may precede the command.
    # -i/--login runs the command through the target user's login shell, in their home.
    ("sudo", _w("-u --user -g --group -C --close-from -D --chdir -h --host -p --prompt -r"
                " --role -t --type -U --other-user -T --command-timeout -R --chroot",
                chdir_opts="-D --chdir", home_opts="-i --login",
                query_opts="-l --list -v --validate -K --remove-timestamp -V --version -e"
                " --edit", assignments=True)),
    ("doas", _w("-u -C")),  # doas(1), OpenDoas
    ("pkexec", _w("--user")),  # pkexec(1), polkit
    ("run0", _w("-u --user -g --group -D --chdir --setenv --unit --property --nice",
                env_opts="--setenv", chdir_opts="-D --chdir")),  # run0(1), systemd (since 256)
    # su(1), runuser(1) (util-linux 2.38): -c runs a string in the target shell; with no
    # command they start a shell that reads stdin.
    # `-`, -l, --login: a login shell, in the target user's home.
    ("su", _w("-s --shell -g --group -G --supp-group -w --whitelist-environment",
              string_opts="-c --command --session-command", rest="none", lone_dash=True,
              home_opts="- -l --login")),
    ("runuser", _w("-s --shell -g --group -G --supp-group -u --user -w",
                   string_opts="-c --command", command_flags="-u --user", rest="none",
                   lone_dash=True, home_opts="- -l --login")),
    ("sg", _w(positionals=1, rest="script", string_opts="-c")),  # sg(1), shadow-utils
    # --- process control. GNU coreutils 9.1: env(1) (-S splits a string into a command;
    # -C runs it in a directory; -P is BSD env's), timeout(1), nice(1), nohup(1),
    # stdbuf(1), chroot(1); GNU time(1); bash(1) builtins builtin, command (-v/-V only look
    # it up), exec, coproc.
    ("env", _w("-u --unset -C --chdir -P", string_opts="-S --split-string",
               chdir_opts="-C --chdir", assignments=True, lone_dash=True)),
    ("timeout", _w("-s --signal -k --kill-after", positionals=1)),
    ("nice", _w("-n --adjustment")),
    ("stdbuf", _w("-i -o -e --input --output --error")),
    ("chroot", _w("--userspec --groups", positionals=1)),
    ("time", _w("-f --format -o --output")),
    ("command", _w(query_opts="-v -V")),
    ("exec", _w("-a")),
    ("nohup, builtin, coproc", _RUNNER),
    # util-linux 2.38: setsid(1), prlimit(1), ionice(1) (-p/-P/-u act on running
    # processes), flock(1) (FILE then a command, or -c STRING), unshare(1), nsenter(1),
    # taskset(1) and chrt(1) (a mask/priority first; -p acts on a running process),
    # script(1) (-c STRING; with none, a shell reading stdin).
    ("setsid, prlimit", _RUNNER),
    ("ionice", _w("-c --class -n --classdata", query_opts="-p --pid -P --pgid -u --uid")),
    ("flock", _w("-w --wait --timeout -E --conflict-exit-code", string_opts="-c --command",
                 positionals=1)),
    # unshare -w/--wd DIR and nsenter -w/--wd[=DIR] (its value only attached) set the
    # working directory.
    ("unshare", _w("-S --setuid -G --setgid -R --root -w --wd --map-user --map-group"
                   " --propagation", chdir_opts="-w --wd")),
    ("nsenter", _w("-t --target -S --setuid -G --setgid", optional_opts="-w --wd -r --root"
                   " -m --mount -u --uts -i --ipc -n --net -p --pid -U --user -C --cgroup"
                   " -T --time", chdir_opts="-w --wd")),
    ("taskset", _w(query_opts="-p --pid", positionals=1)),
    ("chrt", _w("-T -P -D", query_opts="-p --pid", positionals=1)),
    ("script", _w("-E --echo -I --log-in -O --log-out -B --log-io -T --log-timing -m"
                  " --logging-format", string_opts="-c --command", rest="none")),
    # systemd-run(1) (systemd 252): -E/--setenv NAME=VALUE, --working-directory.
    ("systemd-run", _w("-u --unit -p --property -E --setenv --uid --gid -M --machine"
                       " --description --slice -H --host --working-directory -D",
                       env_opts="-E --setenv", chdir_opts="--working-directory")),
    # tracers and sandboxes: strace(1) (strace 6.1), ltrace(1), valgrind(1), perf-stat(1)
    # and perf-record(1) (perf 6.1; options taking a value); glibc's catchsegv; firejail(1);
    # dbus-run-session(1); busybox (APPLET ARGS); expect's unbuffer(1); torsocks(1),
    # tsocks(1), proxychains4 (-f config); macOS arch(1), caffeinate(8) and
    # sandbox-exec(1).
    ("strace", _w("-o -e -p -s -u -E -a -b -I -O -P -S -X")),
    ("ltrace", _w("-o -e -p -s -u -a -n -l -L -x")),
    ("perf stat", _w("-e -o -p -t -C -G -r -x")),
    ("perf record", _w("-e -o -p -t -C -G -F -c")),
    ("catchsegv, busybox, unbuffer, torsocks, tsocks, dbus-run-session, firejail, valgrind,"
     " arch", _RUNNER),
    ("perf trace", _w("-e -o -p -t -C -G -F")),  # perf-trace(1)
    # coreutils(1) (9.1, the multi-call binary): --coreutils-prog=PROG runs PROG.
    ("coreutils", _w(program_opts="--coreutils-prog --coreutils-prog-shebang")),
    ("envchain", _w(positionals=1)),  # envchain NAMESPACE CMD
    # capsh(1) (libcap 2.66): `--` runs /bin/bash with the remaining arguments.
    ("capsh", _w(rest="shell-args")),
    ("at", _w("-q -f -t", rest="none")),
    ("batch", _w("-q -f", rest="none")),
    ("proxychains, proxychains4", _w("-f")),
    ("caffeinate", _w("-t -w")),
    ("sandbox-exec", _w("-f -p -n -D")),
    # --- repeaters and multiplexers. xargs(1) (GNU findutils 4.9; -i/-e/-l take an
    # attached value only); watch(1) (procps-ng 4.0: the command is a string for sh -c
    # unless -x); GNU parallel(1) (::: ends the command); entr(1) -s; watchexec(1); nodemon
    # (`nodemon --help`); hyperfine(1) (each argument is a command string);
    # concurrently's README; screen(1); tmux(1) (tmux 3.3) new-session/send-keys and their
    # aliases.
    ("xargs", _w("-I -n -P -L -d -s -E -a --max-args --max-procs --max-lines --delimiter"
                 " --max-chars --eof --arg-file --process-slot-var",
                 optional_opts="-i -e -l --replace --eof --max-lines", stdin_args=True)),
    ("watch", _w("-n --interval -q --equexit", optional_opts="-d --differences",
                 command_flags="-x --exec", rest="script")),
    ("parallel", _w("-j --jobs -S --sshlogin -a --arg-file --delay --timeout --joblog"
                    " --results -N -n --max-args -d --delimiter -E -I --colsep -C"
                    " --tagstring --retries --halt --workdir --tmpdir",
                    rest="script", stop_words="::: :::: :::+ ::::+")),
    ("entr", _w(string_opts="-s")),
    ("watchexec", _w("-w --watch -e --exts -i --ignore --debounce -s --signal --shell"
                     " -f --filter", rest="script")),
    ("nodemon", _w("-w --watch -e --ext -i --ignore -d --delay", string_opts="-x --exec",
                   rest="none")),
    ("hyperfine", _w("-w --warmup -m --min-runs -M --max-runs -r --runs -S --shell -n"
                     " --command-name --export-json --export-csv --export-markdown"
                     " --export-asciidoc --export-orgmode --style -u --time-unit"
                     " --output --input", pair_opts="-L --parameter-list",
                     string_opts="-p --prepare -c --cleanup -s --setup --conclude",
                     rest="scripts")),
    ("concurrently", _w("-n --names -c --prefix-colors -p --prefix -k --kill-others"
                        " --max-processes -s --success", rest="scripts")),
    ("screen", _w("-S -c -t -p -e -h -L -Logfile -T")),
    ("tmux new-session, tmux new, tmux new-window, tmux neww, tmux split-window,"
     " tmux splitw, tmux run-shell, tmux run, tmux respawn-pane, tmux respawnp,"
     " tmux respawn-window, tmux respawnw, tmux display-popup, tmux popup", _TMUX_NEW),
    ("tmux send-keys, tmux send", _TMUX_SEND),
    # --- remote. ssh(1) (OpenSSH 9.2: HOST then a command string, options may follow it);
    # sshpass(1); `vagrant ssh -c`; `gcloud compute ssh --command`.
    ("ssh", _w(SSH_VALUE_OPTS, positionals=1, rest="script", reopts=True)),
    ("rsh", _w("-l", positionals=1, rest="script", reopts=True)),  # rsh(1), netkit
    # `oc rsh --help` (POD then the command), `limactl shell --help` (INSTANCE then the
    # command), `heroku run --help`, `ddev exec --help`, `fly ssh console --help`
    # (-C runs a string), sops(1) exec-env/exec-file (FILE then a command string).
    ("oc rsh", _w("-c --container -n --namespace --shell --timeout", positionals=1)),
    ("limactl shell", _w("--workdir --shell", positionals=1)),
    ("heroku run", _w("-a --app -r --remote -s --size -e --env --type")),
    ("ddev exec", _w("-s --service -d --dir", chdir_opts="-d --dir")),
    ("fly ssh console, flyctl ssh console", _w("-a --app -r --region -s --machine -u"
                                                " --user", string_opts="-C --command",
                                                rest="none")),
    ("sops exec-env, sops exec-file", _w("--user --filename", positionals=1,
                                         rest="script")),
    ("sshpass", _w("-p -f -d -P")),
    ("vagrant ssh", _w(string_opts="-c --command", rest="none")),
    ("gcloud compute ssh", _w(string_opts="--command", rest="none")),
    # --- package and environment runners, from each tool's `help` for the subcommand:
    # npm exec/npx, bun x/bunx, pnpm exec/dlx (-c runs a string), yarn exec/dlx,
    # uv run/uvx/uv tool run, pipx run, poetry run, pipenv run, pdm run, hatch run,
    # rye run, pixi run, pyenv/rbenv/asdf exec, bundle exec, volta run, fnm exec,
    # nvm exec VERSION, opam/stack/cabal exec (the command follows --), devbox run,
    # conda/mamba/micromamba run, nix-shell (--run/--command STRING), nix develop/shell
    # (-c/--command: the rest is the command), direnv exec DIR, mise exec/x (after --).
    ("npx, npm exec, npm x", _NPX),
    ("bunx, bun x", _w("-p --package")),
    ("pnpm exec", _w("-C --dir --filter", string_opts="-c --shell-mode",
                     chdir_opts="-C --dir")),
    ("pnpm dlx", _w("--package", string_opts="-c --shell-mode")),
    ("yarn dlx", _w("-p --package")),
    ("uv run, uvx, uv tool run", _UV_RUN),
    ("yarn exec", _w("--cwd", chdir_opts="--cwd")),  # yarn 1 `yarn --cwd DIR exec`
    ("pipx run", _w("--spec --python --pip-args --index-url")),
    ("poetry run", _w("-C --directory -P --project", chdir_opts="-C --directory")),
    ("pdm run", _w("-p --project")),
    ("pixi run", _w("-e --environment --manifest-path")),
    ("pixi exec", _w("-s --spec -w --with -c --channel -p --platform")),  # `pixi exec -h`
    ("npm explore", _w(positionals=1, rest="dashdash")),  # npm-explore(1): PKG -- CMD
    ("volta run", _w("--node --npm --yarn --pnpm")),
    ("fnm exec", _w("--using")),
    ("nvm exec, direnv exec", _w(positionals=1)),
    ("pipenv run, hatch run, rye run, pyenv exec, rbenv exec, bundle exec,"
     " asdf exec", _RUNNER),
    ("opam exec, stack exec, cabal exec", _DASHDASH),
    # tox 4 `tox exec -e ENV -- CMD`.
    ("tox exec", _w("-e -c --conf --workdir --root -x --override", rest="dashdash")),
    ("devbox run", _w("-c --config -e --env --env-file")),
    ("conda run, mamba run, micromamba run", _CONDA),
    ("nix-shell", _w("-A --attr -I -p --packages", pair_opts="--arg --argstr",
                     string_opts="--run --command", rest="none")),
    ("nix develop", _w("--profile -f --file --expr", command_opts="-c --command",
                       rest="none")),
    ("nix shell", _w("-f --file --expr", command_opts="-c --command", rest="none")),
    ("mise exec, mise x", _MISE_EXEC),
    # --- containers: docker/podman/nerdctl exec and run, docker compose, kubectl/oc exec,
    # lxc/incus exec (the command follows --), distrobox enter, toolbox run.
    ("docker exec, podman exec, nerdctl exec, docker container exec", _DOCKER_EXEC),
    ("docker run, podman run, nerdctl run, docker container run", _DOCKER_RUN),
    ("docker compose run, docker compose exec, docker-compose run, docker-compose exec",
     _COMPOSE_RUN),
    ("kubectl exec, oc exec", _KUBE_EXEC),
    # kubectl run NAME --image=I [--] [COMMAND] and kubectl debug TARGET [--] COMMAND
    # (kubectl reference): options may follow the name; the command follows --.
    ("kubectl run, kubectl debug, oc run, oc debug",
     _w("-n --namespace --context --kubeconfig --image --image-pull-policy -l --labels"
        " --env --port --overrides --restart -c --container --target --profile"
        " --copy-to --share-processes --attach --annotations --serviceaccount",
        positionals=1, rest="dashdash", reopts=True)),
    ("lxc exec, incus exec", _DASHDASH),
    ("distrobox enter", _w("-n --name", rest="dashdash")),
    ("toolbox run", _w("-c --container")),
    # --- secrets injectors: `op run --help` (1Password CLI), `doppler run --help`,
    # `infisical run --help`, aws-vault exec PROFILE --, dotenv-cli, dotenvx run.
    ("op run", _w("--env-file", rest="dashdash")),
    ("doppler run", _w("-p --project -c --config", string_opts="--command",
                       rest="dashdash")),
    ("infisical run", _w("--env --path", string_opts="--command", rest="dashdash")),
    ("aws-vault exec", _w(positionals=1, rest="dashdash")),
    ("dotenv", _w("-e -v -c", rest="dashdash")),
    ("dotenvx run", _w("-f --env-file", rest="dashdash")),
    # --- git(1) (git 2.39): git-bisect "run CMD...", git-submodule "foreach COMMAND".
    ("git bisect run", _RUNNER),
    ("git submodule foreach", _w(rest="script")),
)
