"""Data tables for the shell analyser (`shell.py`) and flag-rule matcher (`flags.py`).

Everything that is knowledge about particular programs lives here, so the analyser stays a
generic walker. Four kinds of table:

* ``WRAPPERS`` -- programs that run another command (``sudo``, ``timeout``, ``uv run`` ...):
  how to skip their options and find the command or script they run.
* ``ARG_SPECS`` -- how a program's arguments read: options that take a value, options that
  execute or write (``find -exec``, ``curl -o``), and which positional words are files.
* ``ARITY`` -- how many leading words an "always allow" suggestion keeps.
* ``FLAG_ALIASES`` -- long/short spellings of the same flag, for deny/ask rules.

Option names are written as they appear on the command line; ``_s("-a -b")`` builds a set.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal, TypeVar


def _s(names: str) -> frozenset[str]:
    return frozenset(names.split())


_V = TypeVar("_V")


def lookup(table: Mapping[tuple[str, ...], _V], texts: Sequence[str]
           ) -> tuple[tuple[str, ...], _V | None]:
    """The entry for the longest (up to 3) leading words of ``texts`` in ``table``."""
    for size in (3, 2, 1):
        key = tuple(texts[:size])
        if len(key) == size and key in table:
            return key, table[key]
    return (), None


# --------------------------------------------------------------------------- environment
RISKY_ENV_NAMES = _s(
    "PATH BASH_ENV ENV PROMPT_COMMAND SHELLOPTS BASHOPTS PS4 IFS EDITOR VISUAL PAGER LESSOPEN"
    " LESSCLOSE LESSKEY MANPAGER MANOPT BROWSER SSH_ASKPASS SUDO_ASKPASS JAVA_TOOL_OPTIONS"
    " _JAVA_OPTIONS JDK_JAVA_OPTIONS CLASSPATH NODE_OPTIONS NODE_PATH NODE_REPL_EXTERNAL_MODULE"
    " PERL5OPT PERL5LIB PERLLIB PERL5DB RUBYOPT RUBYLIB PHPRC PHP_INI_SCAN_DIR DOCKER_HOST"
    " KUBECONFIG HOME XDG_CONFIG_HOME XDG_CONFIG_DIRS ZDOTDIR SHELL GCONV_PATH RUSTC"
    " RUSTC_WRAPPER RUSTDOC GOFLAGS MAKEFLAGS CC CXX CPP LD TERMINAL"
    " RUSTFLAGS RUSTDOCFLAGS RUSTC_WORKSPACE_WRAPPER RUSTUP_TOOLCHAIN MAKEFILES GNUMAKEFLAGS"
    " RSYNC_RSH RSYNC_CONNECT_PROG LESS LESSKEYIN VIMINIT EXINIT MYVIMRC GVIMINIT"
    " DOTNET_STARTUP_HOOKS OPENSSL_CONF CURL_HOME WGETRC GOROOT GOENV GOPATH GOTOOLCHAIN"
    " AWS_CONFIG_FILE DOCKER_CONFIG RIPGREP_CONFIG_PATH PSQLRC ERL_AFLAGS ERL_ZFLAGS ERL_LIBS"
    " BUNDLE_GEMFILE GEM_HOME GEM_PATH JAVA_HOME GRADLE_USER_HOME GRADLE_OPTS MAVEN_OPTS"
    " CMAKE_TOOLCHAIN_FILE HGRCPATH SVN_SSH GH_BROWSER R_PROFILE R_PROFILE_USER R_ENVIRON"
    " R_ENVIRON_USER INPUTRC"
)
#: Name prefixes (compared upper-cased) and suffixes of variables that change what runs.
RISKY_ENV_PREFIXES = ("LD_", "DYLD_", "PYTHON", "GIT_", "NPM_CONFIG_", "BASH_FUNC_", "CARGO_",
                      "PIP_", "YARN_", "LUA_INIT", "LUA_PATH", "LUA_CPATH")
RISKY_ENV_SUFFIXES = ("_PAGER", "_EDITOR", "_ASKPASS", "_OPTS", "_OPTIONS")


def risky_env(name: str) -> bool:
    """Does setting the variable ``name`` change what a command runs (``LD_PRELOAD``)?"""
    upper = name.upper()
    return (name in RISKY_ENV_NAMES or upper.startswith(RISKY_ENV_PREFIXES)
            or name.endswith(RISKY_ENV_SUFFIXES))


# --------------------------------------------------------------------------- shells
#: sh-family interpreters: ``-c STRING`` or a heredoc body is parsed again as shell.
SHELLS = _s("sh bash zsh dash ksh mksh fish ash yash posh rbash csh tcsh")
#: Other interpreters: reading their program from a pipe makes the command dynamic.
INTERPRETERS = _s("python python2 python3 perl ruby node nodejs php lua deno bun Rscript"
                  " R pypy pypy3 pwsh powershell tclsh wish julia irb osascript expect"
                  " luajit ts-node tsx jshell groovy")
#: Versioned spellings of interpreters (python3.12, pypy3.10, perl5.36, lua5.4, ruby3.2).
INTERPRETER_RE = r"(?:python|pypy|perl|ruby|node|php|lua|luajit|tclsh|wish|julia)[\d.]*"
#: Interpreter options that supply the program inline (so stdin is data, not code).
INLINE_CODE_OPTS = _s("-c -e -E -m --eval --print --command")
#: Per interpreter family (name without version digits): options supplying the program
#: inline; families not listed use INLINE_CODE_OPTS.
INLINE_CODE_BY_FAMILY: Mapping[str, frozenset[str]] = MappingProxyType({
    "python": _s("-c -m"), "pypy": _s("-c -m"), "perl": _s("-e -E"), "ruby": _s("-e"),
    "php": _s("-r"), "lua": _s("-e"), "luajit": _s("-e"), "node": _s("-e --eval -p --print"),
    "nodejs": _s("-e --eval -p --print"), "bun": _s("-e --eval -p --print"),
    "deno": _s("-e --eval"), "tclsh": frozenset(), "wish": frozenset(), "expect": frozenset(),
    "irb": frozenset(), "R": _s("-e"), "Rscript": _s("-e"), "julia": _s("-e -E --eval --print"),
    "osascript": _s("-e"), "pwsh": _s("-c -Command -command -EncodedCommand -e -ec"),
    "powershell": _s("-c -Command -command -EncodedCommand -e -ec"),
})
#: Interpreter options taking a separate value (``python3 -W ignore``, ``node -r ./y``,
#: ``perl -I lib``). Generous on purpose: a value taken for the script only means the
#: program is looked for on stdin (dynamic when that is a pipe).
INTERPRETER_VALUE_OPTS = _s(
    "-W -X -Q -r --require --import --loader --experimental-loader -C --conditions"
    " --env-file --input-type -I -M -m -x -D -d -c -z -F -E -l -f -K --title"
    " -File -file -ExecutionPolicy -WorkingDirectory -wd")
#: Subcommands of runtime front ends that come before the program (``deno run -``).
INTERPRETER_SUBCOMMANDS = _s("run")
#: Shell options that take a separate value.
SHELL_VALUE_OPTS = _s("-o +o -O +O --rcfile --init-file")

#: Builtins that evaluate parts of their arguments as code (array subscripts, arithmetic)
#: or assign variables by name.
EVAL_BUILTINS = _s("let printf read mapfile readarray test [ compgen complete hash wait")
#: Builtin options whose value is a command run later (``mapfile -C CALLBACK``).
CALLBACK_OPTS = _s("-C")

#: Redirect targets that are not files.
NON_FILES = _s("/dev/null /dev/stdout /dev/stderr /dev/stdin /dev/tty /dev/zero")

# --------------------------------------------------------------------------- wrappers
Rest = Literal["command", "script", "scripts", "none", "dashdash"]


@dataclass(frozen=True, slots=True)
class Wrapper:
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
      "dashdash" (the command follows ``--``; without ``--`` treated like "command").
    assignments: ``NAME=VALUE`` words may precede the command (env, sudo).
    lone_dash: a bare ``-`` is an option (``env -``, ``su -``), not the command.
    stop_words: words that end the command (``parallel ... ::: args``).
    chdir_opts: options naming the directory the command runs in (``env -C DIR``).
    """

    value_opts: frozenset[str] = frozenset()
    pair_opts: frozenset[str] = frozenset()
    optional_opts: frozenset[str] = frozenset()
    string_opts: frozenset[str] = frozenset()
    command_opts: frozenset[str] = frozenset()
    command_flags: frozenset[str] = frozenset()
    query_opts: frozenset[str] = frozenset()
    positionals: int = 0
    rest: Rest = "command"
    assignments: bool = False
    lone_dash: bool = False
    stop_words: frozenset[str] = frozenset()
    chdir_opts: frozenset[str] = frozenset()
    env_opts: frozenset[str] = frozenset()  # options whose value is NAME=VALUE (-E, --setenv)
    reopts: bool = False  # options may also follow the positionals (``ssh host -t CMD``)


def _w(values: str = "", **kw: object) -> Wrapper:
    conv = {k: _s(v) if isinstance(v, str) and k.endswith(("opts", "flags", "words")) else v
            for k, v in kw.items()}
    return Wrapper(value_opts=_s(values), **conv)  # type: ignore[arg-type]


_RUNNER = _w()
_CONDA = _w("-n --name -p --prefix --cwd")
_DOCKER_EXEC = _w("-e --env --env-file -u --user -w --workdir --detach-keys", positionals=1)
_DOCKER_RUN = _w(
    "-e --env --env-file -u --user -w --workdir -v --volume -p --publish --name --network"
    " --net -l --label --entrypoint --mount --platform -h --hostname --add-host --cap-add"
    " --cap-drop --cpus -m --memory --restart --pull --runtime --security-opt --tmpfs"
    " --ulimit --user --gpus --device --dns --ipc --pid --log-driver --log-opt --shm-size"
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
_COMPOSE_RUN = _w("-e --env -u --user -w --workdir --entrypoint --name -p --publish -v"
                  " --volume -l --label --index", positionals=1)
_KUBE_EXEC = _w("-c --container -n --namespace --context -f --filename --kubeconfig"
                " --pod-running-timeout -l --selector --cluster --user -s --server",
                positionals=1, rest="dashdash")
_DASHDASH = _w(rest="dashdash")
_NPX = _w("-p --package -w --workspace", string_opts="-c --call")
_UV_RUN = _w(
    "--with --with-editable --with-requirements -p --python --directory --project --package"
    " --extra --group --only-group --no-group --env-file --index --default-index --index-url"
    " --extra-index-url -f --find-links --cache-dir --config-file --from -C --config-setting"
    " --python-platform --exclude-newer --prerelease --resolution --index-strategy"
    " --keyring-provider --refresh-package --reinstall-package --upgrade-package -P"
)
_SSH_VALUES = "-b -c -D -E -e -F -I -i -J -L -l -m -O -o -p -Q -R -S -W -w -B"

WRAPPERS: Mapping[tuple[str, ...], Wrapper] = MappingProxyType({
    ("sudo",): _w("-u --user -g --group -C --close-from -D --chdir -h --host -p --prompt -r"
                  " --role -t --type -U --other-user -T --command-timeout -R --chroot",
                  chdir_opts="-D --chdir",
                  query_opts="-l --list -v --validate -K --remove-timestamp -V --version -e"
                  " --edit", assignments=True),
    ("doas",): _w("-u -C"),
    ("pkexec",): _w("--user"),
    ("run0",): _w("-u --user -g --group -D --chdir --setenv --unit --property --nice",
                  env_opts="--setenv"),
    ("env",): _w("-u --unset -C --chdir -P", string_opts="-S --split-string",
                 chdir_opts="-C --chdir",
                 assignments=True, lone_dash=True),
    ("timeout",): _w("-s --signal -k --kill-after", positionals=1),
    ("nice",): _w("-n --adjustment"),
    ("nohup",): _RUNNER, ("builtin",): _RUNNER, ("catchsegv",): _RUNNER,
    ("coproc",): _RUNNER, ("busybox",): _RUNNER, ("unbuffer",): _RUNNER,
    ("torsocks",): _RUNNER, ("tsocks",): _RUNNER, ("dbus-run-session",): _RUNNER,
    ("firejail",): _RUNNER, ("valgrind",): _RUNNER, ("arch",): _RUNNER,
    ("prlimit",): _RUNNER, ("entr",): _w(string_opts="-s"),
    ("proxychains",): _w("-f"), ("proxychains4",): _w("-f"),
    ("time",): _w("-f --format -o --output"),
    ("command",): _w(query_opts="-v -V"),
    ("exec",): _w("-a"),
    ("xargs",): _w("-I -n -P -L -d -s -E -a --max-args --max-procs --max-lines --delimiter"
                   " --max-chars --eof --arg-file --process-slot-var",
                   optional_opts="-i -e -l --replace --eof --max-lines"),
    ("stdbuf",): _w("-i -o -e --input --output --error"),
    ("setsid",): _RUNNER,
    ("ionice",): _w("-c --class -n --classdata", query_opts="-p --pid -P --pgid -u --uid"),
    ("flock",): _w("-w --wait --timeout -E --conflict-exit-code", string_opts="-c --command",
                   positionals=1),
    ("watch",): _w("-n --interval -q --equexit", optional_opts="-d --differences",
                   command_flags="-x --exec", rest="script"),
    ("chroot",): _w("--userspec --groups", positionals=1),
    ("unshare",): _w("-S --setuid -G --setgid -R --root -w --wd --map-user --map-group"
                     " --propagation"),
    ("nsenter",): _w("-t --target -S --setuid -G --setgid"),
    ("taskset",): _w(query_opts="-p --pid", positionals=1),
    ("chrt",): _w("-T -P -D", query_opts="-p --pid", positionals=1),
    ("strace",): _w("-o -e -p -s -u -E -a -b -I -O -P -S -X"),
    ("ltrace",): _w("-o -e -p -s -u -a -n -l -L -x"),
    ("caffeinate",): _w("-t -w"),
    ("sandbox-exec",): _w("-f -p -n -D"),
    ("systemd-run",): _w("-u --unit -p --property -E --setenv --uid --gid -M --machine"
                         " --description --slice -H --host --working-directory -D",
                         env_opts="-E --setenv"),
    ("script",): _w("-E --echo -I --log-in -O --log-out -B --log-io -T --log-timing -m"
                    " --logging-format", string_opts="-c --command", rest="none"),
    ("su",): _w("-s --shell -g --group -G --supp-group -w --whitelist-environment",
                string_opts="-c --command", rest="none", lone_dash=True),
    ("runuser",): _w("-s --shell -g --group -G --supp-group -u --user -w",
                     string_opts="-c --command", command_flags="-u --user", rest="none",
                     lone_dash=True),
    ("sg",): _w(positionals=1, rest="script", string_opts="-c"),
    ("ssh",): _w(_SSH_VALUES, positionals=1, rest="script", reopts=True),
    ("sshpass",): _w("-p -f -d -P"),
    ("screen",): _w("-S -c -t -p -e -h -L -Logfile -T"),
    ("tmux", "new-session"): _w("-s -n -c -t -x -y -e -F", rest="script"),
    ("tmux", "new"): _w("-s -n -c -t -x -y -e -F", rest="script"),
    ("tmux", "send-keys"): _w("-t -N", rest="script"),
    ("tmux", "send"): _w("-t -N", rest="script"),
    ("parallel",): _w("-j --jobs -S --sshlogin -a --arg-file --delay --timeout --joblog"
                      " --results -N -n --max-args -d --delimiter -E -I --colsep -C"
                      " --tagstring --retries --halt --workdir --tmpdir",
                      rest="script", stop_words="::: :::: :::+ ::::+"),
    ("hyperfine",): _w("-w --warmup -m --min-runs -M --max-runs -r --runs -S --shell -n"
                       " --command-name --export-json --export-csv --export-markdown"
                       " --export-asciidoc --export-orgmode --style -u --time-unit"
                       " --output --input", pair_opts="-L --parameter-list",
                       string_opts="-p --prepare -c --cleanup -s --setup --conclude",
                       rest="scripts"),
    ("concurrently",): _w("-n --names -c --prefix-colors -p --prefix -k --kill-others"
                          " --max-processes -s --success", rest="scripts"),
    ("watchexec",): _w("-w --watch -e --exts -i --ignore --debounce -s --signal --shell"
                       " -f --filter", rest="script"),
    ("nodemon",): _w("-w --watch -e --ext -i --ignore -d --delay", string_opts="-x --exec",
                     rest="none"),
    ("npx",): _NPX, ("npm", "exec"): _NPX, ("npm", "x"): _NPX,
    ("bunx",): _w("-p --package"), ("bun", "x"): _w("-p --package"),
    ("pnpm", "exec"): _w("-C --dir --filter", string_opts="-c --shell-mode"),
    ("pnpm", "dlx"): _w("--package", string_opts="-c --shell-mode"),
    ("yarn", "exec"): _RUNNER, ("yarn", "dlx"): _w("-p --package"),
    ("uv", "run"): _UV_RUN, ("uvx",): _UV_RUN, ("uv", "tool", "run"): _UV_RUN,
    ("pipx", "run"): _w("--spec --python --pip-args --index-url"),
    ("poetry", "run"): _w("-C --directory -P --project"),
    ("pipenv", "run"): _RUNNER, ("pdm", "run"): _w("-p --project"),
    ("hatch", "run"): _RUNNER, ("rye", "run"): _RUNNER,
    ("pixi", "run"): _w("-e --environment --manifest-path"),
    ("pyenv", "exec"): _RUNNER, ("rbenv", "exec"): _RUNNER, ("bundle", "exec"): _RUNNER,
    ("asdf", "exec"): _RUNNER, ("volta", "run"): _w("--node --npm --yarn --pnpm"),
    ("fnm", "exec"): _w("--using"), ("nvm", "exec"): _w(positionals=1),
    ("opam", "exec"): _DASHDASH, ("stack", "exec"): _DASHDASH, ("cabal", "exec"): _DASHDASH,
    ("devbox", "run"): _w("-c --config -e --env --env-file"),
    ("conda", "run"): _CONDA, ("mamba", "run"): _CONDA, ("micromamba", "run"): _CONDA,
    ("nix-shell",): _w("-A --attr -I -p --packages", pair_opts="--arg --argstr",
                       string_opts="--run --command", rest="none"),
    ("nix", "develop"): _w("--profile -f --file --expr", command_opts="-c --command",
                           rest="none"),
    ("nix", "shell"): _w("-f --file --expr", command_opts="-c --command", rest="none"),
    ("direnv", "exec"): _w(positionals=1),
    ("mise", "exec"): _w("-C --cd -j --jobs", rest="dashdash"),
    ("mise", "x"): _w("-C --cd -j --jobs", rest="dashdash"),
    ("docker", "exec"): _DOCKER_EXEC, ("podman", "exec"): _DOCKER_EXEC,
    ("nerdctl", "exec"): _DOCKER_EXEC, ("docker", "container", "exec"): _DOCKER_EXEC,
    ("docker", "run"): _DOCKER_RUN, ("podman", "run"): _DOCKER_RUN,
    ("nerdctl", "run"): _DOCKER_RUN, ("docker", "container", "run"): _DOCKER_RUN,
    ("docker", "compose", "run"): _COMPOSE_RUN, ("docker", "compose", "exec"): _COMPOSE_RUN,
    ("docker-compose", "run"): _COMPOSE_RUN, ("docker-compose", "exec"): _COMPOSE_RUN,
    ("kubectl", "exec"): _KUBE_EXEC, ("oc", "exec"): _KUBE_EXEC,
    ("lxc", "exec"): _DASHDASH, ("incus", "exec"): _DASHDASH,
    ("distrobox", "enter"): _w("-n --name", rest="dashdash"),
    ("toolbox", "run"): _w("-c --container"),
    ("op", "run"): _w("--env-file", rest="dashdash"),
    ("doppler", "run"): _w("-p --project -c --config", string_opts="--command",
                           rest="dashdash"),
    ("infisical", "run"): _w("--env --path", string_opts="--command", rest="dashdash"),
    ("aws-vault", "exec"): _w(positionals=1, rest="dashdash"),
    ("dotenv",): _w("-e -v -c", rest="dashdash"),
    ("dotenvx", "run"): _w("-f --env-file", rest="dashdash"),
    ("vagrant", "ssh"): _w(string_opts="-c --command", rest="none"),
    ("gcloud", "compute", "ssh"): _w(string_opts="--command", rest="none"),
    ("perf", "stat"): _w("-e -o -p -t -C -G -r -x"),
    ("perf", "record"): _w("-e -o -p -t -C -G -F -c"),
    ("git", "bisect", "run"): _RUNNER,
    ("git", "submodule", "foreach"): _w(rest="script"),
})

# --------------------------------------------------------------------------- arguments
Risk = Literal["flag", "edit", "read", "flag-edit", "flag-read", "script", "exec", "at-read",
               "archive", "directory", "at-start-read", "url-read", "pair-read"]
Access = Literal["read", "edit"]


@dataclass(frozen=True, slots=True)
class ArgSpec:
    """How a program's arguments read (after wrappers are stripped).

    risky maps an option to what using it means: "flag" (executes or writes: the option is a
    sensitive token), "edit"/"read" (its value is a file), "flag-edit"/"flag-read" (both),
    "script" (its value is a shell script: sensitive, and parsed again), "exec" (the words
    up to ``;`` are a command: sensitive, and analysed) and "at-read" (a value ``@FILE`` or
    ``name=@FILE`` reads FILE, as in curl), "archive" (tar's archive: edited when creating,
    read otherwise) and "directory" (tar -C: read when creating, written when extracting).
    The key "+" stands for any word starting with ``+`` (``vim +cmd``, ``less +!cmd``).
    option_checks: option -> regex; the option is sensitive when its value matches.
    files: what positional words are; skip: leading positionals that are not files
    (a pattern, a mode, a program) unless one of skip_opts supplies it; first/last: access
    of the first/last positional when there are at least two; edit_opts: options that turn
    read files into edits (``sed -i``); script: checker for the program text ("sed"/"awk").
    positional_re: words matching it are positionals even if they start with ``-``.
    not_file_re: positionals matching it are not files (``host:path``, awk ``var=value``).
    file_opts: when set, positionals are files only if one of these options is present
    (tar's operands are files when creating, member names when extracting).
    assign_files: ``KEY=FILE`` operands naming files (dd ``if=``/``of=``).
    sensitive_positionals: with at least this many positionals the subcommand word itself is
    sensitive (``git config KEY VALUE`` writes configuration that can run commands).
    url_files: ``file://PATH`` operands read PATH (curl, wget).
    """

    value_opts: frozenset[str] = frozenset()
    pair_opts: frozenset[str] = frozenset()
    optional_opts: frozenset[str] = frozenset()
    risky: Mapping[str, Risk] = field(default_factory=dict)
    option_checks: Mapping[str, str] = field(default_factory=dict)
    files: Access | None = None
    skip: int = 0
    skip_opts: frozenset[str] = frozenset()
    first: Access | None = None
    last: Access | None = None
    edit_opts: frozenset[str] = frozenset()
    script: Literal["sed", "awk"] | None = None
    positional_re: str | None = None
    not_file_re: str | None = None
    assign_files: Mapping[str, Access] = field(default_factory=dict)
    file_opts: frozenset[str] = frozenset()
    sensitive_positionals: int = 0
    url_files: bool = False
    read_opts: frozenset[str] = frozenset()  # options turning edited files into reads
    sensitive_re: str | None = None  # positionals matching it are sensitive (sqlite3 .shell)
    assign_env: bool = False  # ``NAME=VALUE`` operands set variables (make SHELL=x)


def _a(values: str = "", risky: dict[str, Risk] | None = None, **kw: object) -> ArgSpec:
    conv = {k: _s(v) if isinstance(v, str) and k.endswith("opts") else v
            for k, v in kw.items()}
    return ArgSpec(value_opts=_s(values), risky=risky or {}, **conv)  # type: ignore[arg-type]


_READ = _a(files="read")
_EDIT = _a(files="edit")
_HEAD = _a("-n -c --lines --bytes --pid -s --sleep-interval", files="read")
_GREP = _a("-e -f -A -B -C -m -d -D --regexp --file --include --exclude --exclude-dir"
           " --exclude-from --label --max-count --after-context --before-context --context"
           " --binary-files --devices --directories", optional_opts="--color --colour",
           risky={"-f": "read", "--file": "read", "--exclude-from": "read"},
           files="read", skip=1, skip_opts="-e -f --regexp --file")
_RG = _a("-e -f -g --glob --iglob -t -T --type --type-not -A -B -C -m -M -j --threads -E"
         " --hostname-bin --hyperlink-format"
         " --encoding --pre --pre-glob -d --max-depth --ignore-file -r --replace --type-add"
         " --sort --sortr --color --colors --path-separator --max-filesize --max-columns"
         " --engine --field-match-separator --field-context-separator --context-separator",
         risky={"--pre": "flag", "--pre-glob": "flag", "-f": "read", "--file": "read",
                "--hostname-bin": "flag",
                "--ignore-file": "read"},
         files="read", skip=1, skip_opts="-e -f --regexp --file --files --type-list")
_JQ = _a("--indent -L --from-file -f", pair_opts="--arg --argjson --slurpfile --rawfile",
         risky={"-f": "read", "--from-file": "read", "--slurpfile": "pair-read",
                "--rawfile": "pair-read"}, files="read", skip=1,
         skip_opts="-f --from-file")
_SED = _a("-l --line-length -e --expression -f --file -s",
          optional_opts="-i --in-place", risky={"-f": "flag-read", "--file": "flag-read"},
          files="read", skip=1, skip_opts="-e --expression -f --file",
          edit_opts="-i --in-place", script="sed")
_AWK = _a("-F -v -f -e --field-separator --assign --file --source -i --include -l --load -E"
          " --exec",
          risky={"-f": "flag-read", "--file": "flag-read", "-i": "flag", "--include": "flag",
                 "-l": "flag", "--load": "flag", "-E": "flag-read", "--exec": "flag-read"},
          files="read", skip=1, skip_opts="-f --file -e --source -E --exec", script="awk",
          not_file_re=r"^[A-Za-z_]\w*=")
_SORT = _a("-k -t -o -S -T --key --field-separator --output --buffer-size"
           " --temporary-directory --parallel --batch-size --compress-program"
           " --files0-from --random-source",
           risky={"-o": "edit", "--output": "edit", "--compress-program": "flag",
                  "--files0-from": "read", "--random-source": "read"}, files="read")
_LESS = _a("-o -O --log-file --LOG-FILE -p --pattern -P --prompt -b -h -j -k -t -T -x -y -z"
           " -D --lesskey-file --lesskey-src --tabs --shift",
           risky={"-o": "flag-edit", "-O": "flag-edit", "--log-file": "flag-edit",
                  "--LOG-FILE": "flag-edit", "-k": "flag", "--lesskey-file": "flag",
                  "--lesskey-src": "flag", "+": "flag"}, files="read")
_VIM = _a("-c --cmd -S -u -U -i -T -w -W -s -t -q",
          risky={"-c": "flag", "--cmd": "flag", "-S": "flag", "-u": "flag", "+": "flag",
                 "-s": "flag", "-l": "flag", "-w": "edit", "-W": "edit", "-U": "flag"},
          files="edit")
_EMACS = _a("--eval -l --load -f --funcall -x --script --insert -script -eval -execute"
            " --execute -load -funcall -L --directory",
            risky={"--eval": "flag", "-l": "flag", "--load": "flag", "-f": "flag",
                   "--funcall": "flag", "-x": "flag", "--script": "flag", "+": "flag",
                   "-script": "flag", "-eval": "flag", "-execute": "flag",
                   "--execute": "flag", "-load": "flag", "-funcall": "flag"},
            files="edit")
_COPY = _a("-t --target-directory -S --suffix", optional_opts="--backup --reflink",
           risky={"-t": "edit", "--target-directory": "edit"}, files="read", last="edit")
_CHMOD = _a(optional_opts="--reference", files="edit", skip=1, skip_opts="--reference",
            positional_re=r"^[-+=]?[ugoa]*[-+=][rwxXstugo0-7]*(,[ugoa]*[-+=][rwxXstugo]*)*$")
_CHOWN = _a(optional_opts="--reference --from", files="edit", skip=1,
            skip_opts="--reference")
_SSH_CHECK = {"-o": r"(?i)^\s*(proxycommand|localcommand|permitlocalcommand"
                    r"|knownhostscommand|remotecommand|match|include|pkcs11provider"
                    r"|securitykeyprovider|sshaskpass|identityagent|controlpath)\b"}
_REMOTE = r"^(?:[\w.@-]+:|rsync://|[a-z]+://)"
_CURL_DATA: dict[str, Risk] = {
    k: "at-read" for k in _s("-d --data --data-binary --data-ascii --data-urlencode -F --form"
                             " --json")
}
_TAR = _a("-f --file -C --directory -I --use-compress-program -T --files-from -X"
          " --exclude-from -b -K -N -g -V -H --format --to-command --checkpoint-action"
          " --info-script -F --new-volume-script --rmt-command --rsh-command --exclude"
          " --owner --group --mode --transform --xform",
          risky={"-I": "flag", "--use-compress-program": "flag", "--to-command": "flag",
                 "--checkpoint-action": "flag", "-F": "flag", "--info-script": "flag",
                 "--new-volume-script": "flag", "--rmt-command": "flag",
                 "--rsh-command": "flag", "-T": "read", "--files-from": "read",
                 "-X": "read", "--exclude-from": "read", "-f": "archive", "--file": "archive",
                 "-C": "directory", "--directory": "directory"},
          files="read", file_opts="-c --create -r --append -u --update")


def _git(risky: dict[str, Risk] | None = None, values: str = "", **kw: object) -> ArgSpec:
    base: dict[str, Risk] = {
        "--output": "flag-edit", "--ext-diff": "flag", "--textconv": "flag",
        "--upload-pack": "flag", "--receive-pack": "flag", "--exec": "flag",
        "--open-files-in-pager": "flag", "--config": "flag", "--template": "flag",
    }
    return _a("--output --upload-pack --receive-pack --exec --config --template " + values,
              risky={**base, **(risky or {})}, **kw)


_GIT_FETCH = _git({"-u": "flag"}, "-u")
_FILTERS = ("--env-filter --tree-filter --index-filter --parent-filter --msg-filter"
            " --commit-filter --tag-name-filter")

ARG_SPECS: Mapping[tuple[str, ...], ArgSpec] = MappingProxyType({
    **{(c,): _READ for c in _s(
        "md5 shasum "
        "cat tac nl wc base32 strings md5sum sha1sum sha224sum sha256sum sha384sum"
        " sha512sum b2sum cksum sum bat batcat source . zcat gzcat bzcat xzcat zstdcat"
        " lz4cat zless zmore column fold fmt expand unexpand paste comm rev pr")},
    **{(c,): _HEAD for c in ("head", "tail")},
    **{(c,): _EDIT for c in _s(
        "rm rmdir unlink shred touch mkdir mkfifo tee dos2unix unix2dos nano")},
    ("uniq",): _a("-f -s -w --skip-fields --skip-chars --check-chars", files="read",
                  last="edit"),
    **{(c,): _READ for c in _s("pv hd hexyl sdiff basenc uuencode pygmentize bat")},
    **{(c,): _a("-o --output -r --recipient -u --local-user --homedir --passphrase-file",
                risky={"-o": "edit", "--output": "edit", "--passphrase-file": "read"},
                files="read") for c in ("gpg", "gpg2")},
    ("shuf",): _a("-n --head-count -o --output --random-source -e -i --input-range",
                  risky={"-o": "edit", "--output": "edit", "--random-source": "read"},
                  files="read"),
    **{(c,): _a("-A -B -C -m -d -D -e -f --max-count --after-context --before-context"
                " --context --regexp --file --include --exclude --type --ignore-dir"
                " --ignore-file", risky={"-f": "read", "--file": "read"}, files="read", skip=1,
                skip_opts="-e -f --regexp --file")
       for c in ("ack", "ugrep", "ug")},
    ("look",): _a("-t --terminate", files="read", skip=1),
    ("split",): _a("-a -b -C -l -n -t --suffix-length --bytes --line-bytes --lines --number"
                   " --separator --additional-suffix --filter",
                   risky={"--filter": "script"}, files="read", last="edit"),
    ("sponge",): _EDIT,
    **{(c,): _a("-S --suffix -b --blocksize -T --threads -L -o --output --memlimit -M",
                risky={"-o": "edit", "--output": "edit"}, files="edit",
                read_opts="-c --stdout --to-stdout -t --test -l --list")
       for c in _s("gzip gunzip xz unxz bzip2 bunzip2 zstd unzstd lz4 lzma unlzma lzip pigz"
                   " brotli")},
    ("date",): _a("-d --date -f --file -r --reference", optional_opts="-I --iso-8601"
                  " --rfc-3339", risky={"-f": "read", "--file": "read", "-r": "read",
                                        "--reference": "read"}),
    ("history",): _a(files="edit", file_opts="-w -a -r -n"),
    **{(c,): _a("-f --file --makefile -C --directory -I --include-dir -j --jobs -l"
                " --load-average -o --old-file --assume-old -W --what-if --new-file"
                " --assume-new -O --output-sync --eval",
                risky={"-f": "flag-read", "--file": "flag-read", "--makefile": "flag-read",
                       "--eval": "flag"}, assign_env=True)
       for c in ("make", "gmake", "bmake")},
    **{("go", c): _a("-exec -toolexec -vettool -overlay -o -C -p -tags -ldflags -gcflags"
                     " -asmflags -mod -modfile -pkgdir -run -bench -count -timeout -cpu"
                     " --exec --toolexec",
                     risky={"-exec": "flag", "-toolexec": "flag", "-vettool": "flag",
                            "--exec": "flag", "--toolexec": "flag", "-overlay": "flag",
                            "-modfile": "flag", "-o": "edit"})
       for c in ("build", "run", "test", "vet", "install", "generate")},
    ("cargo",): _a("--config -Z --manifest-path -p --package --target-dir",
                   risky={"--config": "flag", "-Z": "flag"}),
    ("npm",): _a("--script-shell --node-options --userconfig --globalconfig --prefix",
                 risky={"--script-shell": "flag", "--node-options": "flag",
                        "--userconfig": "flag", "--globalconfig": "flag"}),
    ("emacsclient",): _a("-e --eval -s --socket-name -f --server-file -a --alternate-editor",
                         risky={"-e": "flag", "--eval": "flag", "-a": "flag",
                                "--alternate-editor": "flag"}, files="edit"),
    ("sqlite3",): _a("-cmd -separator -newline -nullvalue -init",
                     risky={"-cmd": "flag", "-init": "flag-read"}, sensitive_re=r"^\s*\."),
    ("tcpdump",): _a("-z -w -r -i -c -C -G -W -s -F -E -T -Z -y -B -j -M -V",
                     risky={"-z": "flag", "-w": "edit", "-r": "read", "-F": "read",
                            "-V": "read", "-E": "flag"}),
    ("cut",): _a("-d -f -c -b --delimiter --fields --characters --bytes --output-delimiter",
                 files="read"),
    ("base64",): _a("-w --wrap", files="read"),
    ("xxd",): _a("-c -g -l -s -o -n -C --cols --len --seek --name", files="read",
                 last="edit"),
    ("od",): _a("-A -j -N -t -S --address-radix --skip-bytes --read-bytes --format",
                optional_opts="-w --width", files="read"),
    ("hexdump",): _a("-e -f -n -s", risky={"-f": "read"}, files="read"),
    ("file",): _a("-m -F -e -f -P --magic-file --separator --exclude --files-from",
                  risky={"-f": "read", "--files-from": "read"}, files="read"),
    ("stat",): _a("-c --format --printf -t", files="read"),
    ("diff",): _a("-I -x -X -F -L --label --from-file --to-file --exclude --exclude-from"
                  " --ignore-matching-lines --horizon-lines --line-format",
                  risky={"--from-file": "read", "--to-file": "read", "-X": "read",
                         "--exclude-from": "read"},
                  optional_opts="-C -U --context --unified --color", files="read"),
    ("dd",): _a(assign_files={"if": "read", "of": "edit"}),
    ("cmp",): _a("-i -n --ignore-initial --bytes", files="read"),
    ("truncate",): _a("-s --size -r --reference", risky={"-r": "read", "--reference": "read"},
                      files="edit"),
    ("sort",): _SORT, ("less",): _LESS, ("more",): _a("-n", risky={"+": "flag"},
                                                     files="read"),
    **{(c,): _GREP for c in ("grep", "egrep", "fgrep", "zgrep")},
    ("rg",): _RG,
    ("ag",): _a("-G --file-search-regex -A -B -C -m --ignore -p --path-to-ignore --depth",
                files="read", skip=1),
    **{(c,): _JQ for c in ("jq", "gojq", "yq", "jaq")},
    **{("yq", c): _JQ for c in ("e", "eval", "ea", "eval-all")},
    ("sed",): _SED, ("gsed",): _SED,
    **{(c,): _AWK for c in ("awk", "gawk", "mawk", "nawk")},
    ("cp",): _COPY, ("install",): _a("-m -o -g -t -S --mode --owner --group --suffix"
                                     " --target-directory", risky={"-t": "edit"},
                                     files="read", last="edit"),
    ("mv",): _a("-t --target-directory -S --suffix", optional_opts="--backup",
                risky={"-t": "edit", "--target-directory": "edit"}, files="edit"),
    ("ln",): _a("-t --target-directory -S --suffix", risky={"-t": "edit"}, files="read",
                last="edit"),  # a link to a file is a way to reach it: the targets count as read
    ("join",): _a("-a -e -j -o -t -v -1 -2", files="read"),
    ("iconv",): _a("-f -t -o --from-code --to-code --output",
                   risky={"-o": "edit", "--output": "edit"}, files="read"),
    ("perl",): _a("-e -E -M -m -I -x -l -0 -F -C -d -D -V", optional_opts="-i",
                  files="read", edit_opts="-i"),
    ("openssl",): _a("-in -out -inkey -key -passin -passout -config -CAfile -cert -signkey"
                     " -engine -provider -provider-path",
                     risky={"-engine": "flag", "-provider": "flag", "-provider-path": "flag",
                            "-in": "read", "-inkey": "read", "-key": "read", "-cert": "read",
                            "-signkey": "read", "-out": "edit", "-config": "flag-read"}),
    ("ssh-keygen",): _a("-f -C -N -P -t -b -E -O -n -I -V -Z",
                        risky={"-f": "read"}),
    ("patch",): _a("-p -d -D -F -B -z -V -r -o -i --output --input --directory",
                   risky={"-o": "edit", "--output": "edit", "-i": "read", "--input": "read"},
                   files="edit"),
    ("chmod",): _CHMOD, ("chown",): _CHOWN, ("chgrp",): _CHOWN,
    ("find",): _a("-fprint -fprint0 -fprintf -fls",
                  risky={"-exec": "exec", "-execdir": "exec", "-ok": "exec", "-okdir": "exec",
                         "-delete": "flag", "-fprint": "flag-edit", "-fprint0": "flag-edit",
                         "-fprintf": "flag-edit", "-fls": "flag-edit"}),
    ("fd",): _a("-e --extension -t --type -E --exclude -d --max-depth --min-depth -S --size"
                " --changed-within --changed-before -o --owner --ignore-file -j --threads"
                " --base-directory --path-separator --search-path --color -c",
                risky={"-x": "exec", "--exec": "exec", "-X": "exec", "--exec-batch": "exec"}),
    ("man",): _a("-M -m -S -s -L -C -p -E -R -e --config-file --manpath",
                 optional_opts="-H --html --pager -P -X",
                 risky={"-P": "flag", "--pager": "flag", "-H": "flag", "--html": "flag",
                        "-C": "flag", "--config-file": "flag", "--browser": "flag"}),
    ("tar",): _TAR, ("gtar",): _TAR, ("bsdtar",): _TAR,
    ("zip",): _a("-TT --unzip-command -b -n -t -tt -x -i -P -O --out",
                 risky={"-TT": "flag", "--unzip-command": "flag"},
                 files="read", first="edit"),
    ("unzip",): _a("-d -x -P", risky={"-d": "edit"}, files="read"),
    ("rsync",): _a("-e --rsh --rsync-path --exclude --include --exclude-from --include-from"
                   " --files-from -f --filter --log-file --partial-dir --temp-dir -T"
                   " --backup-dir --suffix --chmod --chown --password-file --port -B"
                   " --block-size --max-size --min-size --timeout --bwlimit --compare-dest"
                   " --copy-dest --link-dest --out-format --info --debug --iconv --usermap"
                   " --groupmap -M --remote-option",
                   risky={"-e": "flag", "--rsh": "flag", "--rsync-path": "flag", "-M": "flag",
                          "--remote-option": "flag", "--log-file": "edit"},
                   files="read", last="edit", not_file_re=_REMOTE),
    ("scp",): _a("-c -F -i -J -l -o -P -S -D -X", risky={"-S": "flag", "-F": "flag",
                                                         "-D": "flag"},
                 option_checks=_SSH_CHECK, files="read", last="edit", not_file_re=_REMOTE),
    ("sftp",): _a("-B -b -c -D -F -i -J -l -o -P -R -S -s -X",
                  risky={"-S": "flag", "-F": "flag", "-b": "flag-read", "-s": "flag",
                         "-D": "flag"},
                  option_checks=_SSH_CHECK),
    ("ssh",): _a(_SSH_VALUES, risky={"-F": "flag", "-I": "flag", "-E": "flag-edit"},
                 option_checks=_SSH_CHECK),
    ("curl",): _a("-o --output -K --config -T --upload-file -D --dump-header -c --cookie-jar"
                  " -b --cookie -H --header -X --request -u --user -A --user-agent -e"
                  " --referer -x --proxy --trace --trace-ascii --stderr --netrc-file -w"
                  " --write-out --connect-timeout -m --max-time --retry --url -E --cert"
                  " --key --cacert -r --range --limit-rate --resolve -z --time-cond"
                  " --data-raw -Y -y --proto --proto-redir --libcurl --hsts --alt-svc"
                  " --etag-save --etag-compare --variable -a --append --write-out "
                  + " ".join(_CURL_DATA),
                  risky={"-o": "edit", "--output": "edit", "-O": "flag",
                         "--remote-name": "flag", "--remote-name-all": "flag",
                         "-K": "flag-read", "--config": "flag-read", "-T": "read",
                         "--upload-file": "read", "-D": "edit", "--dump-header": "edit",
                         "-c": "edit", "--cookie-jar": "edit", "--trace": "edit",
                         "--trace-ascii": "edit", "--stderr": "edit", "--libcurl": "edit",
                         "--netrc-file": "read", "--hsts": "edit", "--alt-svc": "edit",
                         "--etag-save": "edit", "--etag-compare": "read",
                         "-H": "at-start-read", "--header": "at-start-read",
                         "--variable": "at-read", "--url": "url-read",
                         **_CURL_DATA}, url_files=True),
    ("wget",): _a("-O --output-document -o --output-file -a --append-output -P"
                  " --directory-prefix -i --input-file --post-file --body-file"
                  " --load-cookies --save-cookies -e --execute -U --user-agent --header"
                  " -t --tries -T --timeout --post-data --method --user --password",
                  risky={"-O": "edit", "--output-document": "edit", "-o": "edit",
                         "--output-file": "edit", "-a": "edit", "--append-output": "edit",
                         "-i": "read", "--input-file": "read", "--post-file": "read",
                         "--body-file": "read", "--load-cookies": "read",
                         "--save-cookies": "edit", "-e": "flag", "--execute": "flag",
                         "--use-askpass": "flag", "-P": "edit", "--directory-prefix": "edit"},
                  url_files=True),
    **{(c,): _VIM for c in ("vi", "vim", "nvim", "view", "ex", "gvim", "vimdiff", "nvimdiff",
                          "gvimdiff", "rvim", "rview", "vimx", "evim")},
    ("emacs",): _EMACS,
    ("strace",): _a("-o -e -p -s -u -E -a -b -I -O -P -S -X", risky={"-o": "edit"}),
    ("ltrace",): _a("-o -e -p -s -u -a -n -l -L -x", risky={"-o": "edit"}),
    ("time",): _a("-f --format -o --output", risky={"-o": "edit", "--output": "edit"}),
    ("xargs",): _a("-a --arg-file", risky={"-a": "read", "--arg-file": "read"}),
    ("script",): _a(files="edit"),
    ("sudo",): _a("-u -g -C -D -h -p -r -t -U -T -R", risky={"-e": "flag", "--edit": "flag"}),
    ("sudoedit",): _EDIT,
    ("git",): _git(),
    **{("git", c): _GIT_FETCH for c in ("fetch", "pull", "clone", "ls-remote")},
    ("git", "archive"): _git({"-u": "flag", "-o": "edit", "--remote": "flag"}, "-u -o --remote"
                             " --prefix --format"),
    ("git", "send-email"): _git({"--sendmail-cmd": "flag", "--to-cmd": "flag",
                                 "--cc-cmd": "flag", "--smtp-server": "flag",
                                 "--header-cmd": "flag"},
                                "--sendmail-cmd --to-cmd --cc-cmd --smtp-server --header-cmd",
                                files="read"),
    ("git", "instaweb"): _git({"--httpd": "flag", "-d": "flag", "--browser": "flag",
                               "-b": "flag"}, "--httpd -d --browser -b"),
    ("git", "clone"): _git({"-u": "flag", "-c": "flag", "--config": "flag"}, "-u -c"),
    ("git", "grep"): _git({"-O": "flag"}, optional_opts="-O"),
    ("git", "rebase"): _git({"-x": "script", "--exec": "script"}, "-x"),
    ("git", "difftool"): _git({"-x": "flag", "--extcmd": "flag"}, "-x --extcmd"),
    ("git", "filter-branch"): _git(dict.fromkeys(_FILTERS.split(), "script"), _FILTERS),
    ("git", "format-patch"): _git({"-o": "edit", "--output-directory": "edit"},
                                  "-o --output-directory"),
    ("git", "config"): _git(sensitive_positionals=2),
    **{("git", c): _git({"-F": "read", "--file": "read", "-t": "read", "--template": "read"},
                        "-F --file -t -m --message -C -c --reuse-message --reedit-message")
       for c in ("commit", "tag", "notes")},
    **{("git", c): _git(files="read") for c in ("apply", "am", "hash-object")},
    # Read-only in the built-in defaults, but these options reach other files:
    # `--no-index` compares any two files (its operands become reads),
    # `blame --contents FILE` shows FILE.
    **{("git", c): _git({"--no-index": "flag"}, files="read", file_opts="--no-index")
       for c in ("diff", "log", "show")},
    ("git", "blame"): _git({"--contents": "read"}, "--contents -L -S --date -C -M"),
    ("wc",): _a("--files0-from", risky={"--files0-from": "read"}, files="read"),
    ("du",): _a("-X --exclude-from --files0-from -B --block-size -d --max-depth -t"
                " --threshold --time-style --exclude",
                risky={"-X": "read", "--exclude-from": "read", "--files0-from": "read"},
                files="read"),
    ("tree",): _a("-o -L -P -I -H -T --filelimit --charset --sort --timefmt --fromfile",
                  risky={"-o": "edit", "-R": "flag", "-H": "flag", "--fromfile": "flag"},
                  files="read"),
})

#: Commands whose options are whole words even with a single dash (``find -exec``).
SINGLE_DASH_LONG = _s("find java javac gcc g++ clang clang++ cc ffmpeg xcodebuild openssl go"
                      " sqlite3 emacs")
#: git options before the subcommand: those taking a value, and flags.
GIT_GLOBAL_VALUE = _s("-C -c --git-dir --work-tree --namespace --super-prefix --config-env"
                      " --list-cmds --attr-source")
GIT_GLOBAL_SENSITIVE = _s("-c --config-env --exec-path")
GIT_GLOBAL_PLACES = _s("-C --git-dir --work-tree")

# Directories whose programs are the system's own: a command word with a path
# elsewhere (`./git`, `/tmp/x/rm`) is sensitive (an allow rule must name the path).
SYSTEM_BIN_DIRS = _s("/bin /usr/bin /usr/local/bin /sbin /usr/sbin /usr/local/sbin"
                     " /opt/homebrew/bin /run/current-system/sw/bin")

# --------------------------------------------------------------------------- suggestions
#: Leading words -> how many words an "always allow" suggestion keeps.
ARITY: Mapping[tuple[str, ...], int] = MappingProxyType({
    **{(c,): 2 for c in _s(
        "git npm pnpm yarn bun npx bunx cargo go docker docker-compose podman kubectl helm pip"
        " pip3 uv poetry pdm hatch rye make terraform tofu dotnet mvn gradle gradlew brew apt"
        " apt-get dnf yum pacman systemctl journalctl rustup deno just nx turbo bundle rails"
        " rake mix composer conda mamba swift flutter dart pixi nix gem cabal stack opam"
        " ansible-galaxy minikube kind vercel netlify wrangler firebase heroku flyctl fly")},
    **{(c,): 3 for c in ("gh", "aws", "az", "gcloud", "glab")},
    **{(c, "run"): 3 for c in ("npm", "pnpm", "yarn", "bun", "uv", "poetry", "pdm", "hatch")},
    **{(c, "-m"): 3 for c in ("python", "python3", "py")},
    **{("docker", c): 3 for c in _s(
        "compose image container volume network system buildx context builder")},
    **{("git", c): 3 for c in _s(
        "stash remote submodule worktree bisect notes lfs sparse-checkout")},
    **{("kubectl", c): 3 for c in ("config", "rollout", "auth", "certificate")},
    ("go", "mod"): 3, ("go", "tool"): 3, ("cargo", "+nightly"): 3, ("uv", "pip"): 3,
    ("uv", "tool"): 3, ("terraform", "state"): 3, ("terraform", "workspace"): 3,
    ("npm", "exec"): 3, ("pnpm", "exec"): 3, ("pnpm", "dlx"): 3, ("yarn", "dlx"): 3,
    ("yarn", "workspace"): 4, ("dotnet", "ef"): 3, ("poetry", "env"): 3,
})

# --------------------------------------------------------------------------- flag aliases
_RM = {"-R": "-r", "--recursive": "-r", "--force": "-f", "--dir": "-d",
       "--interactive": "-i", "--verbose": "-v", "--no-preserve-root": "--no-preserve-root"}
_RECURSIVE = {"--recursive": "-R", "--verbose": "-v", "--changes": "-c", "--silent": "-f",
              "--quiet": "-f"}
#: Per command: option spelling -> canonical spellings (several when one implies others).
FLAG_ALIASES: Mapping[tuple[str, ...], Mapping[str, tuple[str, ...]]] = MappingProxyType({
    key: {k: tuple(v.split()) for k, v in table.items()} for key, table in {
        ("rm",): _RM,
        ("cp",): {"-R": "-r", "--recursive": "-r", "--force": "-f", "--archive": "-a",
                  "--no-clobber": "-n", "--interactive": "-i", "--link": "-l",
                  "--symbolic-link": "-s", "--update": "-u"},
        ("mv",): {"--force": "-f", "--no-clobber": "-n", "--interactive": "-i",
                  "--update": "-u"},
        ("ln",): {"--force": "-f", "--symbolic": "-s", "--no-dereference": "-n"},
        ("chmod",): _RECURSIVE, ("chown",): _RECURSIVE, ("chgrp",): _RECURSIVE,
        ("git", "push"): {"--force": "-f", "--delete": "-d", "--all": "--all",
                          "--mirror": "--mirror", "--prune": "--prune", "--tags": "--tags",
                          "--force-with-lease": "--force-with-lease",
                          "--force-if-includes": "--force-if-includes",
                          "--no-verify": "--no-verify", "--set-upstream": "-u",
                          "--dry-run": "-n"},
        ("git", "clean"): {"--force": "-f", "--dry-run": "-n", "--quiet": "-q",
                           "--interactive": "-i", "--exclude": "-e"},
        ("git", "reset"): {"--hard": "--hard", "--soft": "--soft", "--mixed": "--mixed",
                           "--merge": "--merge", "--keep": "--keep"},
        ("git", "checkout"): {"--force": "-f", "--discard-changes": "-f"},
        ("git", "switch"): {"--force": "-f", "--discard-changes": "-f", "--create": "-c",
                            "--force-create": "-C"},
        ("git", "branch"): {"--delete": "-d", "-D": "-d -f", "--force": "-f", "--move": "-m",
                            "-M": "-m -f", "--copy": "-c", "-C": "-c -f"},
        ("git", "commit"): {"--amend": "--amend", "--no-verify": "-n", "--all": "-a",
                            "--message": "-m"},
        ("git", "rebase"): {"--interactive": "-i", "--exec": "-x", "--root": "--root"},
        ("git", "stash"): {"--include-untracked": "-u", "--all": "-a"},
        ("git", "tag"): {"--delete": "-d", "--force": "-f"},
        ("git", "restore"): {"--staged": "-S", "--worktree": "-W", "--source": "-s"},
        ("docker", "rm"): {"--force": "-f", "--volumes": "-v"},
        ("docker", "rmi"): {"--force": "-f"},
        ("docker", "system", "prune"): {"--all": "-a", "--force": "-f", "--volumes": "--volumes"},
        ("docker", "volume", "prune"): {"--all": "-a", "--force": "-f"},
        ("kubectl", "delete"): {"--all": "--all", "--force": "--force", "--recursive": "-R",
                                "--filename": "-f"},
        ("npm", "install"): {"--global": "-g", "--force": "-f", "--save-dev": "-D"},
        ("npm", "publish"): {"--force": "-f"},
        ("sed",): {"--in-place": "-i", "--expression": "-e", "--regexp-extended": "-E",
                   "-r": "-E", "--quiet": "-n", "--silent": "-n"},
        ("curl",): {"--output": "-o", "--remote-name": "-O", "--insecure": "-k",
                    "--location": "-L", "--data": "-d", "--request": "-X", "--upload-file": "-T",
                    "--config": "-K"},
        ("tar",): {"--create": "-c", "--extract": "-x", "--get": "-x", "--file": "-f",
                   "--gzip": "-z", "--verbose": "-v", "--list": "-t", "--absolute-names": "-P"},
        ("dd",): {},
        ("shred",): {"--remove": "-u", "--zero": "-z", "--force": "-f", "--iterations": "-n"},
        ("pip",): {"--upgrade": "-U", "--user": "--user", "--requirement": "-r"},
        ("pip", "install"): {"--upgrade": "-U", "--requirement": "-r", "--editable": "-e",
                             "--break-system-packages": "--break-system-packages"},
    }.items()
})
#: Positional words that imply a flag: (command) -> ((prefix, canonical flag), ...).
#: ``git push origin +main`` is a force push; ``git push origin :main`` deletes.
POSITIONAL_FLAGS: Mapping[tuple[str, ...], tuple[tuple[str, str], ...]] = MappingProxyType({
    ("git", "push"): (("+", "-f"), (":", "-d")),
})

#: Programs whose arguments are never a command they run (so no speculative inner
#: command is offered to deny rules for them): `echo rm -rf /` only prints.
NOT_RUNNERS = _s(
    "echo printf ls dir vdir which type whereis whatis apropos help man info command"
    " hash true false test [ [[ pwd basename dirname realpath readlink printenv"
    " export declare typeset local readonly unset set shopt alias unalias trap"
    " return exit break continue shift wait jobs fg bg kill pkill pgrep killall"
    " make cmake ninja meson bazel just task git hg svn cd pushd popd dirs umask ulimit"
    " getopts read mapfile readarray let history fc complete compgen")
