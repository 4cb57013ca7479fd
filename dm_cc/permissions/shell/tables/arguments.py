"""How programs' arguments read: options that take a value, that execute or write, and
which positional words are files.

``ARG_SPECS`` maps a program's leading words to an :class:`ArgSpec`; :mod:`..arguments`
reads a command's words with it. Option names are written as on the command line; risky
options are grouped by what they mean (:func:`risks`). Each group names the documentation
its options come from.
"""

# No `from __future__ import annotations` here: NamedTuple classes build about twice as
# fast with evaluated annotations, and this module is imported at start-up.

from collections.abc import Mapping
from types import MappingProxyType
from typing import Literal, NamedTuple, get_args

from dm_cc.permissions.shell.tables import DuplicateEntry, names, table, words
from dm_cc.permissions.shell.tables.wrappers import SSH_VALUE_OPTS

Risk = Literal["flag", "edit", "read", "flag-edit", "flag-read", "script", "exec", "at-read",
               "archive", "directory", "at-start-read", "url-read", "pair-read", "colon-read",
               "list-read", "exec-value", "inplace-read", "program", "setting", "ex",
               "ssh-option", "output"]
Access = Literal["read", "edit"]
_RISKS: frozenset[str] = frozenset(get_args(Risk))
_NONE: frozenset[str] = frozenset()
_NO_RISKS: Mapping[str, Risk] = MappingProxyType({})
_NO_FILES: Mapping[str, Access] = MappingProxyType({})


class ArgSpec(NamedTuple):
    """How a program's arguments read (after wrappers are stripped).

    risky maps an option to what using it means: "flag" (executes or writes: the option is a
    sensitive token), "edit"/"read" (its value is a file), "flag-edit"/"flag-read" (both),
    "script" (its value is a shell script: sensitive, and parsed again), "exec" (the words
    up to ``;`` are a command: sensitive, and analysed) and "at-read" (a value ``@FILE`` or
    ``name=@FILE`` reads FILE, as in curl), "archive" (tar's archive: edited when creating,
    read otherwise), "directory" (tar -C: read when creating, written when extracting) and
    "colon-read" (a value ``…:FILE`` reads FILE: ``git log -L 1,5:FILE``), "list-read" (a
    value ``FILE:FILE…`` reads each: ``file -m a.mgc:b.mgc``), "exec-value" (a value
    ``exec=CMD`` runs CMD as shell code, other values do not: tar --checkpoint-action),
    "inplace-read" (its value is read, or edited when one of ``edit_opts`` is given:
    ``json -I -f F``) and "program" (its value is a program and its arguments, split at
    commas and blanks: ``gcc -wrapper sh,-c,CMD``, ``go build -toolexec 'CMD ARGS'``:
    sensitive, and judged as a command), "setting" (a git ``KEY=VALUE`` setting, as ``git
    -c``: sensitive, and VALUE judged as a command when KEY names one: ``git clone -c
    core.fsmonitor=CMD``), "ex" (an editor or pager command: sensitive, and a shell escape
    ``!CMD``, ``:silent !CMD`` judged as shell code: ``vim -c '!CMD'``; a ``+!CMD`` operand
    of a program whose risky options hold "+" the same: ``less '+!CMD'``), "ssh-option"
    (ssh_config(5) ``-o NAME=VALUE``: ProxyCommand, LocalCommand and KnownHostsCommand
    values are shell commands, judged), "output" (a
    file written, or with a leading ``|`` or ``!`` a command its output is piped to:
    strace(1) ``-o '|CMD'``).
    The key "+" stands for any word starting with ``+`` (``vim +cmd``, ``less +!cmd``).
    option_checks: option -> regex; the option is sensitive when its value matches.
    files: what positional words are; skip: leading positionals that are not files
    (a pattern, a mode, a program) unless one of skip_opts supplies it; first/last: access
    of the first/last positional when there are at least two; edit_opts: options that turn
    read files into edits (``sed -i``); script: the language of the program text ("sed"
    and "awk" are checked for risky commands; the literal file names of awk and "jq"
    (jq, yq) programs become requests).
    positional_re: words matching it are positionals even if they start with ``-``.
    not_file_re: positionals matching it are not files (``host:path``, awk ``var=value``).
    file_opts: when set, positionals are files only if one of these options is present
    (tar's operands are files when creating, member names when extracting).
    assign_files: ``KEY=FILE`` operands naming files (dd ``if=``/``of=``).
    sensitive_positionals: with at least this many positionals the command writes
    configuration that can run commands (``git config KEY VALUE``): every positional but
    the value is a sensitive token, its ``NAME=`` part when it has one (``npm set
    script-shell=x`` gives ``script-shell``), so only an allow naming the key allows it
    (``git config user.name *``).
    url_files: operands are URLs (curl, wget): a ``file:`` URL reads its path; with two or
    more URLs (operands or ``url-read`` options), each is also judged as the command with
    that one URL (``curl URL``), so an allow naming one host does not cover another.
    read_opts: options turning edited files into reads (``gzip -c``).
    sensitive_re: positionals, and values of ``code_opts``, matching it are sensitive
    (sqlite3 ``.shell``, ``psql -c '\\! cmd'``); the token is the text itself, so only an
    allow naming that exact text allows it.
    code_opts: options whose value is text in the program's language (``psql -c SQL``).
    stdin_code: the program reads commands from stdin (a database shell): a static
    heredoc or here-string is checked with ``sensitive_re``, a pipe is dynamic.
    assign_env: ``NAME=VALUE`` operands set variables (``make SHELL=x``).
    hardlink_opts / symlink_opts: the command makes hard links with one of these options
    (``cp -l``) / unless one of these is given (``ln`` without ``-s``); a hard link is a writable
    second name of its source, so the files it reads are also edited
    (``ln .git/config x`` reaches ``.git/config``).
    command_re: an operand matching it runs the command its first group holds (socat's
    ``EXEC:CMD``): judged as shell code.
    positional_at_files: an operand ``@FILE``, ``NAME@FILE``, ``NAME=@FILE`` or
    ``NAME:=@FILE`` reads FILE (httpie's request items); the URL before them (after an
    upper-case method) is a request to its host.
    attached_opts: option prefixes whose value may be glued to them in a program whose
    options are whole words (``gcc -oFILE``, ``-B/tmp/x``, ``-Wl,-plugin,x``): the word is
    read as the option and its value.
    response_files: a positional ``@FILE`` is a file of more arguments (gcc(1) "@file"),
    read by the program: ``FILE`` is read and what the command does is unknown (dynamic).
    git_urls: a positional that is a URL (``https://h/r``, ``ssh://h/r``, ``git@h:r``) is a
    request to its host (git-clone(1) "GIT URLS"); a remote's name is not.
    git_paths: positionals (after ``skip``) may be git revisions or paths, and git reads
    the paths: every word after ``--``, the PATH of ``REV:PATH`` (``git show HEAD:.env``)
    and a word that looks like a path (``.``, ``/`` or ``~`` in it) is read.
    flags: the options that take no value. When given, an option in none of the fields is
    unknown, and its next word is read both as its value and as an operand (the strictest
    reading wins: it matters where the first operand is the program text).
    starts: find's starting points -- the words before its expression (after its leading
    options ``-H -L -P -O<n> -D LIST``) -- are files of this access (the rest are not).
    """

    value_opts: frozenset[str] = _NONE
    pair_opts: frozenset[str] = _NONE
    optional_opts: frozenset[str] = _NONE
    risky: Mapping[str, Risk] = _NO_RISKS
    option_checks: Mapping[str, str] = MappingProxyType({})
    files: Access | None = None
    skip: int = 0
    skip_opts: frozenset[str] = _NONE
    first: Access | None = None
    last: Access | None = None
    edit_opts: frozenset[str] = _NONE
    script: Literal["sed", "awk", "jq"] | None = None
    positional_re: str | None = None
    not_file_re: str | None = None
    assign_files: Mapping[str, Access] = _NO_FILES
    file_opts: frozenset[str] = _NONE
    sensitive_positionals: int = 0
    url_files: bool = False
    read_opts: frozenset[str] = _NONE
    sensitive_re: str | None = None
    assign_env: bool = False
    hardlink_opts: frozenset[str] = _NONE
    symlink_opts: frozenset[str] = _NONE
    git_paths: bool = False
    git_urls: bool = False
    starts: Access | None = None
    flags: frozenset[str] = _NONE
    positional_at_files: bool = False
    command_re: str | None = None
    attached_opts: frozenset[str] = _NONE
    response_files: bool = False
    code_opts: frozenset[str] = _NONE
    stdin_code: bool = False


def risks(**by_risk: str) -> Mapping[str, Risk]:
    """Options by what they mean: ``risks(edit="-o --output", flag="-O")``; a keyword is a
    :data:`Risk` with ``_`` for ``-`` (``flag_read``). An option given twice raises."""
    out: dict[str, Risk] = {}
    for kind, options in by_risk.items():
        risk = kind.replace("_", "-")
        if risk not in _RISKS:
            raise ValueError(f"unknown risk {risk!r}")
        for option in words(options):
            if option in out:
                raise DuplicateEntry(f"option {option!r} is given twice in risks()")
            out[option] = risk  # type: ignore[assignment]  # checked against _RISKS above
    return MappingProxyType(out)


def _a(values: str = "", **kw: object) -> ArgSpec:
    """An ArgSpec; ``values`` are its value options, other ``*_opts`` fields and ``flags``
    are strings."""
    conv = {k: words(v) if isinstance(v, str) and (k.endswith("opts") or k == "flags") else v
            for k, v in kw.items()}
    return ArgSpec(words(values), **conv)  # type: ignore[arg-type]


_READ = _a(files="read")
_EDIT = _a(files="edit")

# --- GNU coreutils 9.1 (each program's --help / info page).
_HEAD = _a("-n -c --lines --bytes --pid -s --sleep-interval", files="read")  # tail 9.1
_SORT = _a("-k -t -o -S -T --key --field-separator --output --buffer-size"
           " --temporary-directory --parallel --batch-size --compress-program"
           " --files0-from --random-source",
           risky=risks(edit="-o --output -T --temporary-directory", flag="--compress-program",
                       read="--files0-from --random-source"), files="read")  # -T: writes there
_COPY = _a("-t --target-directory -S --suffix", optional_opts="--backup --reflink",
           risky=risks(edit="-t --target-directory"), files="read", last="edit",
           hardlink_opts="-l --link")
_CHMOD = _a(optional_opts="--reference", files="edit", skip=1, skip_opts="--reference",
            positional_re=r"^[-+=]?[ugoa]*[-+=][rwxXstugo0-7]*(,[ugoa]*[-+=][rwxXstugo]*)*$")
_CHOWN = _a(optional_opts="--reference --from", files="edit", skip=1,
            skip_opts="--reference")
# --- search tools: grep(1) (GNU grep 3.8), rg(1) (ripgrep: --pre and --hostname-bin
# run programs), jq(1) (jq 1.6; gojq, yq and jaq take the same options).
_JQ_FLAGS = ("-n -r -j -a -s -c -C -M -S -e -R --tab --seq --stream --stream-errors"
             " --raw-output --raw-output0 --join-output --ascii-output --slurp"
             " --compact-output --color-output --monochrome-output --sort-keys --exit-status"
             " --raw-input --null-input --unbuffered")
_GREP = _a("-e -f -A -B -C -m -d -D --regexp --file --include --exclude --exclude-dir"
           " --exclude-from --label --max-count --after-context --before-context --context"
           " --binary-files --devices --directories", optional_opts="--color --colour",
           risky=risks(read="-f --file --exclude-from"),
           files="read", skip=1, skip_opts="-e -f --regexp --file")
_RG = _a("-e -f -g --glob --iglob -t -T --type --type-not -A -B -C -m -M -j --threads -E"
         " --hostname-bin --hyperlink-format"
         " --encoding --pre --pre-glob -d --max-depth --ignore-file -r --replace --type-add"
         " --sort --sortr --color --colors --path-separator --max-filesize --max-columns"
         " --engine --field-match-separator --field-context-separator --context-separator",
         # rg(1) 14: --pre COMMAND and --hostname-bin run a program (not a shell)
         risky=risks(flag="--pre-glob", program="--pre --hostname-bin",
                     read="-f --file --ignore-file"),
         files="read", skip=1, skip_opts="-e -f --regexp --file --files --type-list")
_JQ = _a("--indent -L --from-file -f", pair_opts="--arg --argjson --slurpfile --rawfile",
         risky=risks(read="-f --from-file -L", pair_read="--slurpfile --rawfile"),
         files="read",
         skip=1, skip_opts="-f --from-file", script="jq", flags=_JQ_FLAGS,
         # yq v4 `yq --help`: -i/--inplace rewrites its files; kislyuk yq/tomlq/xq
         # (`yq --help`, argparse: prefixes too) -i/--in-place
         edit_opts="-i --inplace --in-place")
# --- program-text tools: sed(1) (GNU sed 4.9: the e/w/r commands, -f), gawk(1) (-f/-E
# program files, -i/--include and -l/--load extensions; mawk and nawk take -f).
_SED = _a("-l --line-length -e --expression -f --file",  # -s/--separate takes none
          optional_opts="-i --in-place", risky=risks(flag_read="-f --file"),
          files="read", skip=1, skip_opts="-e --expression -f --file",
          edit_opts="-i --in-place", script="sed",
          flags="-n --quiet --silent --debug -E -r --regexp-extended -s --separate -z"
                " --null-data -u --unbuffered --posix --sandbox --follow-symlinks -b --binary"
                " --help --version")
_AWK = _a("-F -v -f -e --field-separator --assign --file --source -i --include -l --load -E"
          " --exec -W", optional_opts="-d --dump-variables -D --debug -o --pretty-print -p"
          " --profile -L --lint",  # gawk 5.2 gawk(1): these take an attached file only
          risky=risks(flag_read="-f --file -E --exec -D --debug",
                      flag="-i --include -l --load",
                      edit="-d --dump-variables -o --pretty-print -p --profile"),
          files="read", skip=1, skip_opts="-f --file -e --source -E --exec", script="awk",
          not_file_re=r"^[A-Za-z_]\w*=",
          # gawk 5.2 gawk(1): the value-less options; -W NAME[=VALUE] is any long option
          # ("for POSIX compatibility", prefixes too; mawk(1): -W exec FILE, -W dump), so a
          # -W naming one that runs, loads or writes (exec, file, source, include, load,
          # dump, debug, profile, pretty-print) is sensitive.
          flags="-b --characters-as-bytes -c --traditional -C --copyright -g --gen-pot -h"
                " --help -M --bignum -N --use-lc-numeric -n --non-decimal-data -O --optimize"
                " -P --posix -r --re-interval -s --no-optimize -S --sandbox -t --lint-old -V"
                " --version -k --csv",
          option_checks=names(("-W", r"(?i)^\s*-*[efsildpo]")))
# --- pagers and editors: less(1) (less 590: -o/-O log files, -k/--lesskey-* key files,
# +cmd), vim(1) (Vim 9.0: -c/--cmd/-S/-u/-U/-s run commands, -w/-W write a script file,
# +cmd; its aliases take the same), emacs(1) (--eval, -l/--load, -f/--funcall, --script,
# +LINE; single-dash spellings too).
_LESS = _a("-o -O --log-file --LOG-FILE -p --pattern -P --prompt -b -h -j -k -t -T -x -y -z"
           " -D --lesskey-file --lesskey-src --lesskey-content --tabs --shift",
           risky=risks(flag_edit="-o -O --log-file --LOG-FILE",
                       flag="-k --lesskey-file --lesskey-src --lesskey-content +"),
           files="read")
_VIM = _a("-c --cmd -S -u -U -i -T -w -W -s -t -q",
          risky=risks(ex="-c --cmd", flag="-S -u + -s -l -U", edit="-w -W"), files="edit")
_EMACS = _a("--eval -l --load -f --funcall -x --script --insert -script -eval -execute"
            " --execute -load -funcall -L --directory",
            risky=risks(flag="--eval -l --load -f --funcall -x --script + -script -eval"
                             " -execute --execute -load -funcall"),
            files="edit")
# --- network tools. ssh(1) (OpenSSH): -o options that run commands or load code;
# rsync(1)/scp(1) remote operands (host:path, rsync://, URLs) are not local files;
# curl(1) (curl 7.88; --variable is from 8.3) data options read @FILE.
_SSH_CHECK = names(("-o", r"(?i)^\s*(proxycommand|localcommand|permitlocalcommand"
                          r"|knownhostscommand|remotecommand|match|include|pkcs11provider"
                          r"|securitykeyprovider|sshaskpass|identityagent|controlpath)\b"))
_REMOTE = r"^(?:[\w.@-]+:|rsync://|[a-z]+://)"
_CURL_DATA = "-d --data --data-binary --data-ascii --data-urlencode -F --form --json"
# --- GNU tar 1.34: -I/--use-compress-program, --to-command, -F/--info-script/
# --new-volume-script and --checkpoint-action=exec=CMD run their value with /bin/sh -c
# (src/system.c xexec; checked with tar 1.34 here: `tar cfI a.tar 'echo RAN; cat' f`);
# --rmt-command/--rsh-command run a program; -f is the archive; operands are files only
# when creating. Old-style bundles (`tar cfT a.tar list`) take their values in order.
_TAR = _a("-f --file -C --directory -I --use-compress-program -T --files-from -X"
          " --exclude-from -b -K -N -g -V -H --format --to-command --checkpoint-action"
          " --info-script -F --new-volume-script --rmt-command --rsh-command --exclude"
          " --owner --group --mode --transform --xform --listed-incremental --index-file"
          " --volno-file --owner-map --group-map",
          risky=risks(script="-I --use-compress-program --to-command -F --info-script"
                             " --new-volume-script",
                      exec_value="--checkpoint-action", flag="--rmt-command --rsh-command",
                      read="-T --files-from -X --exclude-from --owner-map --group-map",
                      edit="-g --listed-incremental --index-file --volno-file",
                      archive="-f --file",
                      directory="-C --directory"),
          files="read", file_opts="-c --create -r --append -u --update")
#: GNU tar's operation modes that write the archive (an "archive" option's value is then
#: edited, a "directory" one read).
TAR_WRITE_OPTS = words("-c -r -u -A --create --append --update --concatenate --catenate")

# --- git (git 2.39 man pages). Options any subcommand may take that run programs or write
# (--output, --ext-diff, --textconv, --upload-pack, --receive-pack, --exec,
# --open-files-in-pager, --config, --template); a subcommand adds its own, and may read one
# of these differently (`overrides`). The path of git-upload-pack/git-receive-pack (and
# push's --exec) is run through the shell for a local repository (git-fetch-pack(1),
# git-send-pack(1): "a path to the program"; connect.c runs it with use_shell), so its
# value is judged as a script too.
_GIT_RISKY = risks(flag_edit="--output", script="--upload-pack --receive-pack --exec",
                   flag="--ext-diff --textconv --open-files-in-pager --config --template")


def _git(risky: Mapping[str, Risk] = _NO_RISKS, values: str = "", *,
         overrides: Mapping[str, Risk] = _NO_RISKS, **kw: object) -> ArgSpec:
    """A git subcommand's ArgSpec: the common risky options plus its own (a new option
    given twice raises; an override must name a common one)."""
    merged = dict(_GIT_RISKY)
    for option, risk in risky.items():
        if option in merged:
            raise DuplicateEntry(f"git option {option!r} is already a common risky option")
        merged[option] = risk
    for option, risk in overrides.items():
        if option not in _GIT_RISKY:
            raise DuplicateEntry(f"git override {option!r} is not a common risky option")
        merged[option] = risk
    return _a("--output --upload-pack --receive-pack --exec --config --template " + values,
              risky=MappingProxyType(merged), **kw)


#: A word naming a protected directory (`.git`, `.dm_cc`: see permissions/requests.py),
#: whatever its case.
_PROTECTED = r"(?i)(?:^|/)\.(?:git|dm_cc)(?:/|$)"

#: A make command-line definition that runs something by itself: an expansion or a
#: command substitution in its value (`X=$(shell cmd)`), `!=` (`X!=cmd`), shell
#: metacharacters that a recipe would run, or a variable that sets make's shell or
#: flags (GNU make 4.3 manual, "Overriding Variables", "Choosing the Shell").
_MAKE_DEFINITION = (r"^(?=[^=]*=)(?:[^=]*[!$`(]|[^=]*=[\s\S]*[$`;|&<>\n]|\s*(?:SHELL"
                    r"|\.SHELLFLAGS|MAKEFLAGS|MFLAGS|GNUMAKEFLAGS|MAKEFILES|MAKESHELL|MAKE"
                    r"|\.RECIPEPREFIX)\s*[:+?!]*=)")

_CMAKE_RUNS = (r"(?i)^CMAKE_(?:\w*_LAUNCHER|PROJECT_\w*INCLUDE\w*|TOOLCHAIN_FILE|\w*_COMPILER"
               r"|\w*LINKER\w*|MAKE_PROGRAM|USER_MAKE_RULES_OVERRIDE\w*|\w*_CLANG_TIDY"
               r"|\w*_CPPLINT|\w*_CPPCHECK|\w*_INCLUDE_WHAT_YOU_USE)\b")

#: ld(1) options in a -Wl,/-Xlinker value that load code or write a file (binutils 2.40):
#: -plugin, -o/--output, -Map, --dependency-file, and @FILE (more options from FILE).
_LINKER_RISK = (r"(?:^|,)(?:-{1,2}(?:plugin|o|output|Map|dependency-file|out-implib)"
                r"(?:$|[=,])|-o\S|-Map=|@)")

# ======== database shells (issue 22): their SQL and meta-commands are another language,
# judged conservatively -- anything that runs a program, loads code, or reads or writes a
# file named in the text makes it sensitive (the token is the text: only an allow naming it
# allows); text with an expansion, or piped in, is dynamic.
#: sqlite3 CLI 3.40 ("Special commands to sqlite3", "SQL functions": readfile, writefile,
#: edit, load_extension; ATTACH and VACUUM INTO create files): a dot-command other than
#: the ones that only show or format.
_SQLITE_RISK = (r"(?im)^\s*\.(?!(?:tables|schema|fullschema|headers?|mode|ind(?:ex|ic)es"
                r"|dump|databases|help|width|nullvalue|separator|show|timer|stats|eqp|print"
                r"|changes|bail|echo|explain|dbinfo|quit|exit)\b)"
                r"|\b(?:load_extension|readfile|writefile|edit|fts3_tokenizer)\s*\("
                r"|\battach\b|\bvacuum\b[\s\S]*\binto\b")
_SQLITE = _a("-cmd -separator -newline -nullvalue -init", risky=risks(flag="-cmd",
             flag_read="-init"), sensitive_re=_SQLITE_RISK, stdin_code=True,
             code_opts="-cmd")
#: duckdb 0.9 CLI (sqlite3's dot-commands) and SQL: COPY/EXPORT/IMPORT/ATTACH/INSTALL/
#: LOAD, read_*/write_* and glob table functions, and `FROM 'file'` read or write files.
_DUCKDB = _a("-c -cmd -init -s", code_opts="-c -cmd -s",
             risky=risks(flag_read="-init"),
             sensitive_re=_SQLITE_RISK + r"|(?i:\b(?:copy|export|import|install|load|pragma"
                          r"|call)\b|\b(?:read_\w+|write_\w+|glob|getenv|sniff_csv)\s*\("
                          r"|\bfrom\s+')", stdin_code=True)
#: psql(1) (PostgreSQL 16): a backslash command other than the ones that only describe
#: (\d…, \l, \x, \q, \?, \h, \timing, \conninfo, \encoding, \echo, \errverbose) --
#: \! runs a shell, \o/\w/\g write, \i/\ir read, \copy … program, \set x `cmd` runs
#: one --, and server-side SQL reaching files or programs (COPY … PROGRAM, COPY … TO/FROM
#: 'file', pg_read_file, lo_import/lo_export, LOAD 'library').
_PSQL_RISK = (r"\\(?!(?:d[A-Za-z]*\+?|l\+?|list|x|q|\?|h|help|timing|conninfo|encoding|echo"
              r"|errverbose|copyright)(?![A-Za-z!]))"
              r"|(?i:\bprogram\b|\bcopy\b[^;]*\b(?:to|from)\s+e?'"
              r"|\bpg_(?:read_file|read_binary_file|ls_\w+|stat_file)\b|\blo_(?:import|export)\b"
              r"|\bload\s+')")
_PSQL = _a("-c --command -f --file -o --output -L --log-file -d --dbname -h --host -p"
           " --port -U --username -v --set --variable -P --pset -F --field-separator -R"
           " --record-separator -T --table-attr",
           code_opts="-c --command", risky=risks(flag_read="-f --file",
                                                 edit="-o --output -L --log-file"),
           sensitive_re=_PSQL_RISK, stdin_code=True)
#: mysql(1) (MySQL 8 / MariaDB 10.11): client commands system (\!), source (\.), tee
#: (\T), pager (\P), edit (\e) run, read or write; SELECT … INTO OUTFILE/DUMPFILE,
#: LOAD DATA and load_file() reach files. --pager runs a program, --tee writes,
#: --defaults-file/--defaults-extra-file read options (a pager among them),
#: --plugin-dir/--default-auth load plugins, --init-command runs SQL on connecting.
_MYSQL_RISK = (r"(?i)(?:^|;)\s*(?:system|source|tee|pager|edit)\b|\\[!.TPe]"
               r"|\binto\s+(?:out|dump)file\b|\bload_file\s*\(|\bload\s+data\b")
_MYSQL = _a("-e --execute -u --user -p -h --host -P --port -D --database -S --socket"
            " --pager --tee --defaults-file --defaults-extra-file --plugin-dir --default-auth"
            " --init-command --init-command-add",
            code_opts="-e --execute", risky=risks(
                flag="--pager --plugin-dir --default-auth --init-command --init-command-add",
                flag_read="--defaults-file --defaults-extra-file", edit="--tee"),
            sensitive_re=_MYSQL_RISK, stdin_code=True)

_FILTERS = ("--env-filter --tree-filter --index-filter --parent-filter --msg-filter"
            " --commit-filter --tag-name-filter")

ARG_SPECS: Mapping[tuple[str, ...], ArgSpec] = table(
    # --- read their operands. GNU coreutils 9.1 (cat, tac, nl, base32, basenc, the
    # *sum programs, cksum, sum, fold, fmt, expand, unexpand, paste, comm, pr); util-linux
    # (column, rev, hexdump's hd); binutils strings(1); BSD md5 and Perl's shasum; bat;
    # pv(1); hexyl; sdiff (GNU diffutils); uuencode (GNU sharutils); pygmentize; bash's
    # source/. (read a script file); the compressed-file readers of gzip, bzip2, xz, zstd
    # and lz4.
    ("md5, shasum, cat, tac, nl, base32, strings, md5sum, sha1sum, sha224sum, sha256sum,"
     " sha384sum, sha512sum, b2sum, cksum, sum, source, ., zcat, gzcat, bzcat,"
     " xzcat, zstdcat, lz4cat, zless, zmore, column, fold, fmt, expand, unexpand, paste,"
     " comm, rev, pr, pv, hd, hexyl, basenc, uuencode, pygmentize", _READ),
    # sdiff(1) GNU diffutils 3.8: -o/--output writes the merged file, --diff-program runs
    # a program.
    ("sdiff", _a("-o --output -w --width -I --ignore-matching-lines --diff-program --tabsize",
                 risky=risks(edit="-o --output", flag="--diff-program"), files="read")),
    ("wc", _a("--files0-from", risky=risks(read="--files0-from"), files="read")),
    ("head, tail", _HEAD),
    ("cut", _a("-d -f -c -b --delimiter --fields --characters --bytes --output-delimiter",
               files="read")),
    ("base64", _a("-w --wrap", files="read")),
    ("od", _a("-A -j -N -t -S --address-radix --skip-bytes --read-bytes --format",
              optional_opts="-w --width", files="read")),
    ("stat", _a("-c --format --printf", files="read")),  # -t/--terse takes no value
    ("uniq", _a("-f -s -w --skip-fields --skip-chars --check-chars", files="read",
                last="edit")),
    ("shuf", _a("-n --head-count -o --output --random-source -i --input-range",  # -e: none
                risky=risks(edit="-o --output", read="--random-source"), files="read")),
    ("split", _a("-a -b -C -l -n -t --suffix-length --bytes --line-bytes --lines --number"
                 " --separator --additional-suffix --filter",
                 risky=risks(script="--filter"), files="read", last="edit")),
    ("join", _a("-a -e -j -o -t -v -1 -2", files="read")),
    # date(1) coreutils 9.1: -s/--set sets the system clock
    ("date", _a("-d --date -f --file -r --reference -s --set", optional_opts="-I --iso-8601"
                " --rfc-3339", risky=risks(read="-f --file -r --reference", flag="-s --set"))),
    ("truncate", _a("-s --size -r --reference", risky=risks(read="-r --reference"),
                    files="edit")),
    ("sort", _SORT),
    ("du", _a("-X --exclude-from --files0-from -B --block-size -d --max-depth -t"
              " --threshold --time-style --exclude",
              risky=risks(read="-X --exclude-from --files0-from"), files="read")),
    ("dd", _a(assign_files=names(("if", "read"), ("of", "edit")))),
    ("cmp", _a("-i -n --ignore-initial --bytes", files="read")),  # GNU diffutils
    ("diff", _a("-I -x -X -F -L --label --from-file --to-file --exclude --exclude-from"
                " --ignore-matching-lines --horizon-lines --line-format",
                risky=risks(read="--from-file --to-file -X --exclude-from"),
                optional_opts="-C -U --context --unified --color", files="read")),
    # --- write their operands: coreutils rm, rmdir, unlink, shred, touch, mkdir, mkfifo,
    # tee; dos2unix/unix2dos; nano; moreutils sponge; bash's history -w/-a/-r/-n FILE.
    ("rm, rmdir, unlink, shred, touch, mkdir, mkfifo, tee, dos2unix, unix2dos, nano, sponge",
     _EDIT),
    ("history", _a(files="edit", file_opts="-w -a -r -n")),
    # --- copy, move, link, modes (coreutils): the last operand is written; a link to a
    # file is a way to reach it, so ln's targets count as read.
    ("cp", _COPY),
    ("install", _a("-m -o -g -t -S --mode --owner --group --suffix --target-directory",
                   risky=risks(edit="-t --target-directory"), files="read", last="edit")),
    ("mv", _a("-t --target-directory -S --suffix", optional_opts="--backup",
              risky=risks(edit="-t --target-directory"), files="edit")),
    # ln makes hard links unless -s: a hard link is a writable second name of its target.
    # link(1) (coreutils 9.1): `link FILE1 FILE2`, a hard link always.
    ("ln, link", _a("-t --target-directory -S --suffix",
                    risky=risks(edit="-t --target-directory"),
                    files="read", last="edit", symlink_opts="-s --symbolic")),
    ("chmod", _CHMOD),
    ("chown, chgrp", _CHOWN),
    # --- compressors: gzip(1) (gzip 1.12) and the xz, bzip2, zstd, lz4, lzma, lzip, pigz
    # and brotli front ends (the options are their union): operands are replaced, unless
    # -c/-t/-l only read them.
    ("gzip, gunzip, xz, unxz, bzip2, bunzip2, zstd, unzstd, lz4, lzma, unlzma, lzip, pigz,"
     " brotli", _a("-S --suffix -b --blocksize -T --threads -o --output --memlimit -M",
                   risky=risks(edit="-o --output"), files="edit",
                   read_opts="-c --stdout --to-stdout -t --test -l --list")),
    ("tar, gtar, bsdtar", _TAR),
    # zip(1) (Info-ZIP 3.0): -TT/--unzip-command runs a program; unzip(1) -d DIR.
    ("zip", _a("-TT --unzip-command -b -n -t -tt -x -i -P -O --out",
               risky=risks(script="-TT --unzip-command", edit="-O --out"), files="read",
               first="edit")),
    ("unzip", _a("-d -x -P", risky=risks(edit="-d"), files="read")),
    # --- search and filter tools.
    ("grep, egrep, fgrep, zgrep", _GREP),
    ("rg", _RG),
    # ack(1) (ack 3.7, Getopt::Long: prefixes too): --pager runs a program, --ackrc reads
    # a file of options (which may name a pager), --output is an expression, --files-from
    # reads a list.
    ("ack", _a("-A -B -C -m --max-count --after-context --before-context --context --type"
               " --ignore-dir --ignore-file --pager --ackrc --files-from --output --type-add"
               " --type-set --type-del --match --range-start --range-end",
               risky=risks(script="--pager", flag_read="--ackrc", flag="--output",
                           read="--files-from"),
               files="read", skip=1, skip_opts="--match -f -g")),
    # ugrep(1) 6.x (`ug` reads ~/.ugrep as --config): --filter runs programs on input
    # files, --pager runs one, --config reads options, --save-config writes them.
    ("ugrep, ug", _a("-A -B -C -m -d -D -e -f --max-count --after-context --before-context"
                     " --context --regexp --file --include --exclude --exclude-from --filter"
                     " --ignore-files --filter-magic-label",
                     optional_opts="--pager --config --save-config",
                     risky=risks(read="-f --file --exclude-from", flag="--filter",
                                 script="--pager", flag_read="--config",
                                 edit="--save-config"),
                     files="read", skip=1, skip_opts="-e -f --regexp --file")),
    # the_silver_searcher ag(1) 2.2: --pager runs a program, -p/--path-to-ignore reads.
    ("ag", _a("-G --file-search-regex -A -B -C -m --ignore -p --path-to-ignore --depth"
              " --pager -g --workers -W --width --ignore-dir",
              risky=risks(script="--pager", read="-p --path-to-ignore"),
              files="read", skip=1)),
    ("look", _a("-t --terminate", files="read", skip=1)),  # util-linux look(1)
    ("jq, gojq, yq, jaq, yq e, yq eval, yq ea, yq eval-all, tomlq, xq", _JQ),
    # in-place editors of data files: trentm json(1) (`json --help`: -I/--in-place
    # rewrites the file named by -f); dasel (v1/v2 `dasel --help`: put/delete write the
    # -f file unless -o names another, -o/--out writes); prettier 3 CLI ("--write",
    # "--plugin" loads code, --config/--ignore-path read, --cache-location written).
    ("json", _a("-f -e -c -k -a -o -d -D -M -A", risky=risks(inplace_read="-f"),
                edit_opts="-I --in-place")),
    ("dasel, dasel select", _a("-f --file -o --out -r --read -w --write -s --selector -p"
                               " --parser", risky=risks(read="-f --file", edit="-o --out"))),
    ("dasel put, dasel delete", _a("-f --file -o --out -r --read -w --write -s --selector -t"
                                   " --type -v --value -p --parser",
                                   risky=risks(edit="-f --file -o --out"))),
    ("prettier", _a("--config --ignore-path --plugin --cache-location --parser"
                    " --stdin-filepath --log-level --config-precedence",
                    risky=risks(flag="--plugin", flag_read="--config", read="--ignore-path",
                                edit="--cache-location"),
                    files="read", edit_opts="-w --write")),
    ("sed, gsed", _SED),
    ("awk, gawk, mawk, nawk", _AWK),
    # GNU findutils 4.9 find(1): the starting points (before the expression, after -H -L
    # -P -D LIST -O<n>) are walked and listed: read.
    ("find", _a("-fprint -fprint0 -fprintf -fls -files0-from -D",
                risky=risks(exec="-exec -execdir -ok -okdir", flag="-delete",
                            flag_edit="-fprint -fprint0 -fprintf -fls",
                            read="-files0-from"), starts="read")),
    ("fd", _a("-e --extension -t --type -E --exclude -d --max-depth --min-depth -S --size"
              " --changed-within --changed-before -o --owner --ignore-file -j --threads"
              " --base-directory --path-separator --search-path --color -c",
              risky=risks(exec="-x --exec -X --exec-batch"))),  # fd(1): -x/-X run a command
    ("xargs", _a("-a --arg-file", risky=risks(read="-a --arg-file"))),  # findutils xargs(1)
    # --- viewers and editors.
    ("less", _LESS),
    ("more", _a("-n", risky=risks(flag="+"), files="read")),  # util-linux more(1): +cmd
    # bat(1) 0.24 `bat --help`: --pager runs a program; `bat cache --build/--clear` write
    # the cache (--target names it, --source is read).
    ("bat, batcat", _a("-l --language -H --highlight-line --file-name --diff-context --tabs"
                       " --wrap --terminal-width --color --italic-text --decorations --paging"
                       " --pager -m --map-syntax --ignored-suffix --theme --style -r"
                       " --line-range --nonprintable-notation --binary --squeeze-limit",
                       risky=risks(script="--pager"), files="read")),
    ("bat cache, batcat cache", _a("--source --target", risky=risks(
        flag="-b --build -c --clear", read="--source", edit="--target"))),
    # delta(1) 0.16 `delta --help`: --pager runs a program, --config reads a gitconfig
    # file of its settings (a pager among them); `delta A B` compares two files.
    ("delta", _a("--pager --config --features --syntax-theme -w --width --tabs --paging"
                 " --max-line-length --wrap-max-lines --default-language"
                 " --hyperlinks-file-link-format --line-numbers-left-format"
                 " --line-numbers-right-format",
                 risky=risks(script="--pager", flag_read="--config"), files="read")),
    # fzf(1) 0.5x: --preview and --info-command run shell code (with {} filled in later),
    # a --bind action execute/become/reload/preview/transform... runs one, --listen takes
    # actions over HTTP, --with-shell names the shell, --history is written.
    ("fzf", _a("--height --min-height --layout --border --border-label --margin --padding"
               " --info --prompt --pointer --marker --header --header-lines --preview-window"
               " --preview-label -q --query -f --filter -d --delimiter -n --nth --with-nth"
               " --tiebreak --color --tabstop --expect --history --history-size --scheme"
               " --algo --ellipsis --separator --scrollbar --walker --walker-root"
               " --walker-skip --bind --preview --with-shell --info-command --tmux --style",
               optional_opts="--listen --listen-unsafe",
               risky=risks(script="--preview --info-command",
                           flag="--listen --listen-unsafe --with-shell --tmux",
                           edit="--history", read="--walker-root"),
               option_checks=names(("--bind", r"(?i)(?:^|[,:+])(?:execute(?:-silent|-multi)?"
                                    r"|become|reload(?:-sync)?|preview|change-preview"
                                    r"|(?:bg-)?transform[\w-]*)\s*[^\w\s-]")))),
    ("vi, vim, nvim, view, ex, gvim, vimdiff, nvimdiff, gvimdiff, rvim, rview, vimx, evim",
     _VIM),
    ("emacs", _EMACS),
    ("emacsclient", _a("-e --eval -s --socket-name -f --server-file -a --alternate-editor",
                       risky=risks(flag="-e --eval -a --alternate-editor"), files="edit")),
    ("sudoedit", _EDIT),
    # man(1), man-db 2.11: -l/--local-file reads its operands as files.
    ("man", _a("-M -m -S -s -L -C -p -E -R -e --config-file --manpath -P --pager",
               optional_opts="-H --html -X",
               # the pager and the browser run through the shell (man-db's pipeline)
               risky=risks(script="-P --pager -H --html --browser", flag="-C --config-file"),
               files="read", file_opts="-l --local-file")),
    # --- data and crypto tools: hexdump(1), xxd(1) (Vim), file(1), iconv(1) (glibc),
    # gpg(1) (GnuPG 2.2), openssl(1) (OpenSSL 3: -engine/-provider load code; the other
    # options are its subcommands'), ssh-keygen(1), patch(1) (GNU patch 2.7), sqlite3 (3.40:
    # -cmd and dot-commands such as .shell),
    # tcpdump(8) (-z runs a program after rotating).
    ("hexdump", _a("-e -f -n -s", risky=risks(read="-f"), files="read")),
    ("xxd", _a("-c -g -l -s -o -n --cols --len --seek --name", files="read",  # -C: none
               last="edit")),
    # file-5.44 `file --help`: -C/--compile writes the compiled magic file; -m/--magic-file
    # takes "a colon-separated list of magic number files" (each read).
    ("file", _a("-m -F -e -f -P --magic-file --separator --exclude --exclude-quiet"
                " --files-from --parameter",
                risky=risks(read="-f --files-from", list_read="-m --magic-file",
                            flag="-C --compile"),
                files="read")),
    ("iconv", _a("-f -t -o --from-code --to-code --output", risky=risks(edit="-o --output"),
                 files="read")),
    ("gpg, gpg2", _a("-o --output -r --recipient -u --local-user --homedir --passphrase-file",
                     risky=risks(edit="-o --output", read="--passphrase-file"),
                     files="read")),
    ("openssl", _a("-in -out -inkey -key -passin -passout -config -CAfile -cert -signkey"
                   " -engine -provider -provider-path",
                   risky=risks(flag="-engine -provider -provider-path",
                               read="-in -inkey -key -cert -signkey", edit="-out",
                               flag_read="-config"))),
    ("ssh-keygen", _a("-f -C -N -P -t -b -E -O -n -I -V -Z", risky=risks(read="-f"))),
    ("patch", _a("-p -d -D -F -B -z -V -r -o -i --output --input --directory"
                 " --reject-file", risky=risks(edit="-o --output -r --reject-file -d"
                                                    " --directory", read="-i --input"),
                 files="edit")),  # patch 2.7.6: -d DIR edits under DIR, -r FILE writes
    ("sqlite3", _SQLITE),
    ("duckdb", _DUCKDB),
    ("psql", _PSQL),
    ("mysql, mariadb", _MYSQL),
    # mongosh(1) (2.x `mongosh --help`): --eval and -f/--file run JavaScript, which can
    # read and write files (fs) and start processes.
    ("mongosh, mongo", _a("--eval -f --file --host --port -u --username -p --password"
                          " --authenticationDatabase",
                          risky=risks(flag="--eval", flag_read="-f --file"))),
    ("tcpdump", _a("-z -w -r -i -c -C -G -W -s -F -E -T -Z -y -B -j -M -V",
                   risky=risks(program="-z", flag="-E", edit="-w", read="-r -F -V"))),
    ("perl", _a("-e -E -M -m -I -x -l -0 -F -C -d -D -V", optional_opts="-i",
                files="read", edit_opts="-i")),  # perlrun(1): -i edits in place
    # --- network tools.
    ("rsync", _a("-e --rsh --rsync-path --exclude --include --exclude-from --include-from"
                 " --files-from -f --filter --log-file --partial-dir --temp-dir -T"
                 " --backup-dir --suffix --chmod --chown --password-file --port -B"
                 " --block-size --max-size --min-size --timeout --bwlimit --compare-dest"
                 " --copy-dest --link-dest --out-format --info --debug --iconv --usermap"
                 " --groupmap -M --remote-option --write-batch --only-write-batch"
                 " --read-batch --config --early-input",
                 risky=risks(program="-e --rsh", flag="--rsync-path -M --remote-option",
                             edit="--log-file --write-batch --only-write-batch --partial-dir"
                                  " --temp-dir -T --backup-dir",
                             read="--read-batch --config --early-input --files-from"
                                  " --exclude-from --include-from --password-file"),
                 files="read", last="edit", not_file_re=_REMOTE)),
    ("scp", _a("-c -F -i -J -l -o -P -S -D -X", risky=risks(program="-S", flag="-F -D",
                                                           ssh_option="-o"),
               option_checks=_SSH_CHECK, files="read", last="edit", not_file_re=_REMOTE)),
    ("sftp", _a("-B -b -c -D -F -i -J -l -o -P -R -S -s -X",
                risky=risks(program="-S", flag="-F -s -D", flag_read="-b", ssh_option="-o"),
                option_checks=_SSH_CHECK)),
    ("ssh", _a(SSH_VALUE_OPTS, risky=risks(flag="-F -I", flag_edit="-E", ssh_option="-o"),
               option_checks=_SSH_CHECK)),
    ("curl", _a("-o --output -K --config -T --upload-file -D --dump-header -c --cookie-jar"
                " -b --cookie -H --header -X --request -u --user -A --user-agent -e"
                " --referer -x --proxy --trace --trace-ascii --stderr --netrc-file -w"
                " --write-out --connect-timeout -m --max-time --retry --url -E --cert"
                " --key --cacert -r --range --limit-rate --resolve -z --time-cond"
                " --data-raw -Y -y --proto --proto-redir --libcurl --hsts --alt-svc"
                " --etag-save --etag-compare --variable -a --append --output-dir --preproxy"
                " --connect-to --doh-url --socks4 --socks4a --socks5 --socks5-hostname"
                " --proxy1.0 --dns-servers --interface --unix-socket --abstract-unix-socket"
                " " + _CURL_DATA,
                # curl(1) 7.88: --output-dir DIR holds what -o/-O write; the proxies,
                # --connect-to, --resolve, --doh-url and the sockets send the request to
                # another host than the URL names (sensitive: only an allow naming the
                # option allows).
                risky=risks(edit="-o --output -D --dump-header -c --cookie-jar --trace"
                                 " --trace-ascii --stderr --libcurl --hsts --alt-svc"
                                 " --etag-save --output-dir",
                            flag="-O --remote-name --remote-name-all -x --proxy --preproxy"
                                 " --connect-to --resolve --doh-url --socks4 --socks4a"
                                 " --socks5 --socks5-hostname --proxy1.0 --dns-servers"
                                 " --unix-socket --abstract-unix-socket",
                            flag_read="-K --config",
                            read="-T --upload-file --netrc-file --etag-compare",
                            at_start_read="-H --header -w --write-out",
                            at_read="--variable " + _CURL_DATA,
                            url_read="--url"),
                option_checks=names(("-w --write-out", r"%output\{")), url_files=True)),
    ("wget", _a("-O --output-document -o --output-file -a --append-output -P"  # wget 1.21
                " --directory-prefix -i --input-file --post-file --body-file"
                " --load-cookies --save-cookies -e --execute -U --user-agent --header"
                " -t --tries -T --timeout --post-data --method --user --password --config",
                risky=risks(edit="-O --output-document -o --output-file -a --append-output"
                                 " --save-cookies -P --directory-prefix",
                            read="-i --input-file --post-file --body-file --load-cookies",
                            flag="-e --execute --use-askpass", flag_read="--config"),
                url_files=True)),
    # ======== network clients (issue 22). httpie `http --help` (3.2; xh takes the same):
    # a request item FIELD@FILE, FIELD=@FILE, FIELD:=@FILE or @FILE uploads or embeds
    # FILE, -o/--output and --session (a path) write; aria2c(1) 1.36: -d/--dir and -o/
    # --out write, -i/--input-file and --conf-path read, the --on-* hooks run a program;
    # ncat(1) 7.93 -e/--exec runs a program, -c/--sh-exec a shell command, --lua-exec a
    # script (netcat-traditional's -e/-c the same); socat(1) 1.7 EXEC:/SYSTEM: addresses.
    ("http, https, xh, xhs", _a("-o --output --session --session-read-only -a --auth -A"
                                " --auth-type --verify --cert --cert-key --proxy -p --print"
                                " --pretty -s --style --format-options --timeout"
                                " --max-redirects --default-scheme",
                                risky=risks(edit="-o --output --session",
                                            read="--session-read-only --cert --cert-key",
                                            flag="--proxy"),
                                positional_at_files=True)),
    ("aria2c", _a("-d --dir -o --out -i --input-file --conf-path --save-session -l --log"
                  " --on-download-complete --on-download-error --on-download-start"
                  " --on-download-pause --on-download-stop --on-bt-download-complete"
                  " --all-proxy --http-proxy --https-proxy -x -s -j",
                  risky=risks(edit="-d --dir -o --out --save-session -l --log",
                              read="-i --input-file", flag_read="--conf-path",
                              program="--on-download-complete --on-download-error"
                                      " --on-download-start --on-download-pause"
                                      " --on-download-stop --on-bt-download-complete",
                              flag="--all-proxy --http-proxy --https-proxy"))),
    ("nc, ncat, netcat, nc.traditional", _a("-e --exec -c --sh-exec --lua-exec -p -s -w -i"
                                            " -o --output -x --proxy",
                                            risky=risks(program="-e --exec",
                                                        script="-c --sh-exec",
                                                        flag_read="--lua-exec",
                                                        edit="-o --output",
                                                        flag="-x --proxy"))),
    # socat(1) 1.7: an EXEC:/SYSTEM: address runs its command (up to the address's
    # options after a comma), a program or through the shell.
    ("socat", _a(sensitive_re=r"(?i)^(?:exec|system|open|create|gopen|pipe|unix-listen)"
                              r"[:,]|,\s*(?:exec|system)\b",
                 command_re=r"(?i)^(?:exec|system):([^,]+)")),
    # --- build tools: GNU make 4.3 (-f reads a makefile, --eval runs text, VAR=value
    # operands); `go help build` (-exec, -toolexec, -vettool, -overlay, -modfile);
    # cargo(1) (--config, -Z); npm-config (--script-shell, --node-options, config files).
    # GNU make 4.3 `make --help` (4.4 adds -E for --eval): -C/-I name directories whose
    # makefiles run (read, so
    # outside the project asks), -e lets the environment override the makefile's
    # variables; a VAR=VALUE operand is sensitive when it can run something itself
    # (_MAKE_DEFINITION).
    ("make, gmake, bmake", _a("-f --file --makefile -C --directory -I --include-dir -j"
                              " --jobs -l --load-average -o --old-file --assume-old -W"
                              " --what-if --new-file --assume-new -O --output-sync --eval -E",
                              risky=risks(flag_read="-f --file --makefile",
                                          flag="--eval -E -e --environment-overrides",
                                          read="-C --directory -I --include-dir"),
                              assign_env=True, sensitive_re=_MAKE_DEFINITION)),
    # cmake 3.25 `cmake --help`: -E runs a command-mode tool (its words are a command:
    # `cmake -E env X=1 cmd`), -P runs a script, -C and --toolchain load script files,
    # -S is the source tree whose CMakeLists.txt runs; -D of a cmake-variables(7) entry
    # naming a program or a script to include is sensitive.
    ("cmake", _a("-S -B -C -D -U -G -T -A -P --toolchain --install-prefix --preset --build"
                 " --target -t -j --parallel --config --install --prefix --component -L",
                 risky=risks(exec="-E", flag_read="-P -C --toolchain", read="-S"),
                 option_checks=names(("-D", _CMAKE_RUNS)))),
    # pytest 9.0 `pytest --help`: -p loads a plugin, -o/--override-ini sets any ini option
    # (addopts, cache_dir), -c/--config-file reads another config, --rootdir moves the
    # cache and conftest search, --basetemp is emptied with rm -rf, --tx (xdist) starts
    # interpreters, --pastebin uploads; report files are written.
    ("pytest, py.test, python -m pytest, python3 -m pytest",
     _a("-k -m -p -o -c -W -r -n --rootdir --basetemp --junitxml --junit-xml --junit-prefix"
        " --override-ini --config-file --confcutdir --deselect --ignore --ignore-glob --tb"
        " --maxfail --durations --durations-min --log-file --log-level --log-cli-level"
        " --import-mode --pdbcls --pastebin --report-log --resultlog --html --cov"
        " --cov-report --cov-config --dist --tx --capture --log-format --log-file-level",
        optional_opts="--debug",
        option_checks=names(("-p", r"^(?!no:)")),  # -p no:NAME only disables a plugin
        risky=risks(flag="-o --override-ini --rootdir --pdbcls --pastebin --tx",
                    flag_edit="--basetemp",
                    flag_read="-c --config-file --cov-config",
                    edit="--junitxml --junit-xml --log-file --report-log --resultlog --html"
                         " --debug"))),
    # ======== compilers and linkers (issue 22, "programs by what they can do"). `go help
    # build` and `go help test` (go 1.21): -exec/-toolexec/-vettool name a program run
    # with the build's words (its value split at blanks, go's quoted.Split), -C DIR builds
    # DIR's module, -o writes the binary.
    ("go build, go run, go test, go vet, go install, go generate",
     _a("-exec -toolexec -vettool -overlay -o -C -p -tags -ldflags -gcflags -asmflags -mod"
        " -modfile -pkgdir -run -bench -count -timeout -cpu --exec --toolexec",
        risky=risks(program="-exec -toolexec -vettool --exec --toolexec",
                    flag="-overlay -modfile", edit="-o", read="-C"))),
    # gcc(1) (GCC 12, "Overall Options", "Directory Options", "Link Options", "Preprocessor
    # Options", "@file") and clang(1)/`clang --help` (LLVM 15): -wrapper runs a program
    # with the compiler's subprocesses (a comma-separated list); -B/--prefix DIR runs the
    # cc1/as/collect2/ld it finds there; -specs=FILE rewrites the subprocess command lines;
    # -fplugin/-fpass-plugin and `-Xclang -load` load code; -fuse-ld=PATH and --ld-path
    # choose the linker; -Wl,/-Xlinker pass -plugin, -o, -Map or @FILE to ld(1); -o, -MF,
    # -aux-info, -dumpdir, -MJ, --serialize-diagnostics write; a positional @FILE holds
    # more options. Every operand is read (a source, an object, a library).
    ("gcc, g++, cc, c++, clang, clang++, gcc-12, gcc-13, gcc-14, g++-12, g++-13, g++-14,"
     " clang-14, clang-15, clang-16, clang-17, clang-18, c89, c99, tcc, icx, icpx",
     _a("-o -x -B -MF -MT -MQ -I -L -l -D -U -include -imacros -isystem -iquote -idirafter"
        " -iprefix -iwithprefix -iwithprefixbefore -isysroot -arch -framework -target"
        " -Xlinker -Xclang -Xassembler -Xpreprocessor -Xopenmp-target --param -u -z -e -T"
        " -wrapper -specs --specs -aux-info -dumpdir -dumpbase -dumpbase-ext -MJ -mllvm -F"
        " --sysroot --prefix -working-directory --ld-path -fuse-ld -fplugin -fpass-plugin"
        " -ivfsoverlay -iframework -serialize-diagnostics --serialize-diagnostics -Wl, -Wa,"
        " -Wp,",
        attached_opts="-o -B -MF -MT -MQ -I -L -l -D -U -Wl, -Wa, -Wp, -x",
        risky=risks(program="-wrapper",
                    flag_read="-B --prefix -specs --specs -ivfsoverlay",
                    flag="-fplugin -fpass-plugin --ld-path -working-directory",
                    edit="-o -MF -aux-info -dumpdir -MJ -serialize-diagnostics"
                         " --serialize-diagnostics",
                    read="--sysroot -isysroot -include -imacros"),
        option_checks=names(("-fuse-ld", r"/"),
                            ("-Xclang", r"^-(?:load|add-plugin|plugin|fpass-plugin"
                                        r"|load-pass-plugin|o$|MF|dependency-file)"),
                            ("-Xlinker -Wl,", _LINKER_RISK),
                            ("-Wa, -Wp, -Xassembler -Xpreprocessor", r"(?:^|,)(?:-o|-M|@)")),
        files="read", response_files=True)),
    # ld(1) (GNU binutils 2.40; ld.lld, ld.gold, mold take the same): -plugin loads code,
    # -o/-Map/--dependency-file/--out-implib write, -T reads a script, @FILE holds options.
    ("ld, ld.bfd, ld.gold, ld.lld, lld, mold, ld64.lld, wasm-ld",
     _a("-o --output -T --script -L --library-path -l --library -e --entry -m -soname -h"
        " -rpath -rpath-link --dynamic-linker -I -Map --version-script -z -u --undefined"
        " --plugin -plugin --plugin-opt -plugin-opt --sysroot -y --trace-symbol"
        " --dependency-file --out-implib -A --architecture -b --format -F --filter -f"
        " --auxiliary -R --just-symbols -Y -c --mri-script",
        attached_opts="-o -T -L -l",
        risky=risks(flag="--plugin -plugin --plugin-opt -plugin-opt",
                    edit="-o --output -Map --dependency-file --out-implib",
                    read="-T --script -c --mri-script --version-script"),
        files="read", response_files=True)),
    # rustc --help and `rustc -C help` (Rust 1.74): -C linker=/link-arg(s)=/llvm-args=
    # run or load a program, -Z (unstable) options include plugins and codegen backends,
    # -o/--out-dir write, --emit=KIND=PATH writes PATH, @path holds more arguments.
    ("rustc", _a("-o --out-dir -C --codegen -Z --emit --crate-type --crate-name --edition -L"
                 " -l --cfg --target --extern --sysroot --error-format --json --cap-lints -W"
                 " -A -D -F --explain --print --check-cfg --remap-path-prefix",
                 risky=risks(edit="-o --out-dir", flag="-Z"),
                 option_checks=names(("-C --codegen", r"^\s*(?:linker|link-args?|llvm-args"
                                      r"|passes|incremental|profile-generate|codegen-backend)"),
                                     ("--emit", r"=")),
                 files="read", response_files=True)),
    # javac(1) (JDK 17): -processorpath/-processor/-Xplugin: load and run code, -J passes
    # an option to the JVM running javac (an agent), -d/-s/-h write; java(1) and javac
    # read @argfiles ("Command-Line Argument Files").
    ("javac", _a("-d -s -h -cp -classpath --class-path -sourcepath --source-path"
                 " -processorpath --processor-path -processor -encoding -source -target"
                 " --release -bootclasspath -extdirs -endorseddirs --module-path -p"
                 " --module-source-path --upgrade-module-path --system --add-modules"
                 " --limit-modules --add-exports --add-reads --patch-module"
                 " --processor-module-path -Xmaxerrs -Xmaxwarns -J -Xplugin:",
                 attached_opts="-J -Xplugin:",
                 risky=risks(edit="-d -s -h",
                             flag="-processorpath --processor-path -processor"
                                  " --processor-module-path -Xplugin: -J"),
                 files="read", response_files=True)),
    ("java", _a("-cp -classpath --class-path -p --module-path -m --module --add-modules",
                response_files=True)),
    # ar(1) (GNU binutils 2.40): KEYLETTERS ARCHIVE MEMBER...; --plugin loads code.
    ("ar", _a("--plugin --target --output", risky=risks(flag="--plugin", edit="--output"),
              files="read", skip=1, first="edit", response_files=True)),
    # cargo(1) (1.74): --manifest-path names another package (its build scripts run), -C
    # DIR works there (both read, so outside the project asks).
    ("cargo", _a("--config -Z --manifest-path -p --package --target-dir -C -j --jobs"
                 " --features -F --target --bin --example --test --bench --profile"
                 " --color --message-format",
                 risky=risks(setting="--config", flag="-Z", read="--manifest-path -C"))),
    # npm 9 npm-config(7): -C/--prefix and -w/--workspace name the package whose scripts
    # run (read, so outside the project asks); `npm config set`/`npm set` write config
    # (script-shell, node-options) that later runs.
    ("npm", _a("--script-shell --node-options --userconfig --globalconfig --prefix -C -w"
               " --workspace",
               risky=risks(script="--script-shell",
                           flag="--node-options --userconfig --globalconfig",
                           read="--prefix -C -w --workspace"))),
    ("npm config set, npm set, yarn config set, pnpm config set, pnpm set",
     _a(sensitive_positionals=1)),
    # ======== options naming a config file that holds code, or another build (issue 22).
    # Config files: kubectl(1) and helm --kubeconfig (user.exec credential plugins run),
    # helm --post-renderer (runs it); docker(1) --config DIR (credential helpers), -H/
    # --host (another daemon); pip(1) 23 --python (runs that interpreter), --log writes;
    # terraform(1) 1.6 -chdir (the configuration there runs providers), -plugin-dir (loads
    # them); bazel startup options --bazelrc, --server_javabase, --host_jvm_args.
    ("kubectl, oc", _a("--kubeconfig --context --cluster --user -n --namespace -s --server"
                       " --token --as --as-group -l --selector -o --output -f --filename -c"
                       " --container --request-timeout --certificate-authority"
                       " --client-certificate --client-key",
                       risky=risks(flag_read="--kubeconfig",
                                   flag="--enable-alpha-plugins --enable-exec"))),
    ("helm", _a("--kubeconfig --kube-context -n --namespace --registry-config"
                " --repository-config --repository-cache --post-renderer --post-renderer-args"
                " -f --values --set --set-string --set-file --version",
                risky=risks(flag_read="--kubeconfig --registry-config --repository-config",
                            flag="--post-renderer", read="-f --values --set-file"))),
    ("docker, podman", _a("--config -H --host --context -l --log-level",
                          risky=risks(flag_read="--config", flag="-H --host"))),
    ("pip, pip3", _a("--python --log --proxy --retries --timeout --exists-action"
                     " --trusted-host --cert --client-cert --cache-dir --use-feature"
                     " --use-deprecated --keyring-provider -r --requirement -c --constraint"
                     " -e --editable -t --target --prefix --root -i --index-url"
                     " --extra-index-url -f --find-links --src --upgrade-strategy --platform"
                     " --python-version --implementation --abi --report --progress-bar"
                     " --global-option --config-settings -C",
                     risky=risks(flag="--python", edit="--log --report",
                                 read="-r --requirement -c --constraint -e --editable"))),
    ("terraform, tofu", _a("-chdir -var -var-file -out -state -state-out -backup -target"
                           " -plugin-dir -lock-timeout -parallelism -backend-config",
                           risky=risks(read="-chdir -var-file -backend-config",
                                       flag="-plugin-dir", edit="-state-out -backup"))),
    ("bazel, bazelisk", _a("--bazelrc --output_base --output_user_root --server_javabase"
                           " --host_jvm_args --startup_time",
                           risky=risks(flag_read="--bazelrc",
                                       flag="--server_javabase --host_jvm_args",
                                       edit="--output_base --output_user_root"))),
    # Build files and directories: an allow written for the project's own build must not
    # cover another build file (sensitive, and read) or a build elsewhere (read: outside
    # the project asks). ninja(1) 1.11 -f/-C; just(1) 1.x -f/--justfile, -d/
    # --working-directory, --shell, -c/--command (runs its words); rake 13 -f/-C, -e/-p/-E
    # (Ruby code), -r/-I/-R; gradle 8 -b/-c/-I/-p/-g (init.d scripts in the user home
    # run); mvn 3.9 -f/-s/-gs/-t/-gt, -l writes; pnpm 8 -C/--dir; yarn 1 --cwd,
    # --use-yarnrc; meson 1.2 -C, --cross-file/--native-file (they name the compilers);
    # scons 4.5 -f/-C/-I/--site-dir; tox 4 -c, --workdir; nox -f, --envdir; go-task -t/-d.
    ("ninja", _a("-f -C -j -k -l -d -t -w", risky=risks(flag_read="-f", read="-C"))),
    ("just", _a("-f --justfile -d --working-directory --shell --shell-arg --dotenv-path"
                " --dotenv-filename --chooser --color --list-heading --list-prefix",
                pair_opts="--set",
                risky=risks(flag_read="-f --justfile --dotenv-path", read="-d"
                            " --working-directory", flag="--shell --shell-arg --chooser",
                            exec="-c --command"))),
    ("rake", _a("-f --rakefile -C --directory -e --execute -p --execute-print -E"
                " --execute-continue -r --require -I --libdir -R --rakelibdir",
                risky=risks(flag_read="-f --rakefile -R --rakelibdir", read="-C --directory",
                            flag="-e --execute -p --execute-print -E --execute-continue -r"
                                 " --require -I --libdir"))),
    ("gradle", _a("-b --build-file -c --settings-file -p --project-dir -I --init-script -g"
                  " --gradle-user-home --project-cache-dir -D -P -x --exclude-task"
                  " --console --warning-mode --max-workers --priority",
                  risky=risks(flag_read="-b --build-file -c --settings-file -I --init-script",
                              flag="-g --gradle-user-home", read="-p --project-dir"))),
    ("mvn, mvnw", _a("-f --file -s --settings -gs --global-settings -t --toolchains -gt"
                     " --global-toolchains -l --log-file -D -P --activate-profiles -pl"
                     " --projects -rf --resume-from -T --threads -b --builder",
                     risky=risks(flag_read="-f --file -s --settings -gs --global-settings -t"
                                           " --toolchains -gt --global-toolchains",
                                 edit="-l --log-file"))),
    ("pnpm", _a("-C --dir --filter -F --reporter --loglevel",
                risky=risks(read="-C --dir"))),
    ("yarn", _a("--cwd --use-yarnrc --modules-folder --cache-folder --global-folder",
                risky=risks(read="--cwd", flag_read="--use-yarnrc"))),
    ("meson", _a("-C --cross-file --native-file -D --buildtype --prefix --backend"
                 " --wrap-mode", risky=risks(read="-C", flag_read="--cross-file"
                                                   " --native-file"))),
    ("scons", _a("-f --file --makefile --sconstruct -C --directory -I --include-dir"
                 " --site-dir -j --jobs",
                 risky=risks(flag_read="-f --file --makefile --sconstruct --site-dir",
                             read="-C --directory -I --include-dir"))),
    ("tox", _a("-c --conf -e --workdir --root -r", risky=risks(flag_read="-c --conf",
                                                            edit="--workdir"))),
    ("nox", _a("-f --noxfile -s --session --sessions -e --envdir -t --tags",
               risky=risks(flag_read="-f --noxfile", edit="--envdir"))),
    ("task, go-task", _a("-t --taskfile -d --dir", risky=risks(flag_read="-t --taskfile",
                                                              read="-d --dir"))),
    # --- wrappers' own options that write or run (their inner command is handled by
    # WRAPPERS): strace(1)/ltrace(1) -o, GNU time(1) -o, sudo(8) -e (sudoedit), script(1)'s
    # typescript file.
    ("strace", _a("-o -e -p -s -u -E -a -b -I -O -P -S -X", risky=risks(output="-o"))),
    ("ltrace", _a("-o -e -p -s -u -a -n -l -L -x", risky=risks(edit="-o"))),
    ("time", _a("-f --format -o --output", risky=risks(edit="-o --output"))),
    ("script", _a(files="edit")),
    ("sudo", _a("-u -g -C -D -h -p -r -t -U -T -R", risky=risks(flag="-e --edit"))),
    # tree(1) 2.3.2 (man.archlinux.org/man/tree.1): -o writes the listing, -R with -H/-o
    # writes 00Tree.html in every directory; --gitfile, --infofile, --hintro and --houtro
    # read the file they name; --fromfile/--fromtabfile read the listing from the operands.
    ("tree", _a("-o -L -P -I -H -T --filelimit --charset --sort --timefmt --gitfile --infofile"
                " --hintro --houtro --scheme --authority --compress",
                risky=risks(edit="-o", flag="-R -H --fromfile --fromtabfile",
                            read="--gitfile --infofile --hintro --houtro"), files="read")),
    # --- git subcommands (git 2.39 man pages): fetch/pull/ls-remote -u (--upload-pack),
    # clone -u and -c (config), archive --remote/-o, send-email's *-cmd and
    # --smtp-server, instaweb --httpd/--browser, grep -O (open in pager), rebase -x,
    # difftool -x/--extcmd, filter-branch filters, format-patch -o, config KEY VALUE,
    # commit/tag/notes -F/-t (read a file: --template reads one rather than running it),
    # apply/am/hash-object operands, diff/log/show --no-index (compares any two files),
    # blame --contents FILE.
    ("git", _git()),
    ("git fetch, git pull, git ls-remote", _git(risks(script="-u"), "-u", git_urls=True)),
    ("git push", _git(git_urls=True)),
    # a bare or separate git directory is a git directory under another name, whose
    # config (written later as an ordinary file) runs commands for `git -C DIR`.
    ("git clone", _git(risks(script="-u", setting="-c", flag="--bare --mirror"
                             " --separate-git-dir"), "-u -c --separate-git-dir",
                       overrides=risks(setting="--config"), git_urls=True)),
    ("git init", _git(risks(flag="--bare --separate-git-dir"), "--separate-git-dir")),
    # git-send-email(1): the *-cmd values run through the shell; --smtp-server may name a
    # program (run directly).
    ("git send-email", _git(risks(script="--sendmail-cmd --to-cmd --cc-cmd --header-cmd",
                                  flag="--smtp-server"),
                            "--sendmail-cmd --to-cmd --cc-cmd --smtp-server --header-cmd",
                            files="read")),
    ("git instaweb", _git(risks(flag="--httpd -d --browser -b"), "--httpd -d --browser -b")),
    ("git rebase", _git(risks(script="-x"), "-x", overrides=risks(script="--exec"))),
    # git-difftool(1) -x/--extcmd: git-difftool--helper evals it with $LOCAL $REMOTE.
    ("git difftool", _git(risks(script="-x --extcmd"), "-x --extcmd")),
    ("git filter-branch", _git(risks(script=_FILTERS), _FILTERS)),
    ("git format-patch", _git(risks(edit="-o --output-directory"), "-o --output-directory")),
    # git-config(1): KEY VALUE writes it (so does the `set` subcommand of git 2.46); these
    # options write or remove settings, or open an editor on the file; -f names the file.
    ("git config", _git(risks(flag="--add --replace-all --unset --unset-all --rename-section"
                                   " --remove-section -e --edit", edit="-f --file"),
                        "-f --file --blob --type --default --comment",
                        sensitive_positionals=2)),
    # git-hook(1) runs a hook; git-credential(1) runs the configured helpers (and prints
    # the credentials); git-daemon(1) --access-hook runs a program; git-bundle(1) create
    # writes the bundle file.
    ("git hook, git credential", _git(sensitive_positionals=1)),
    ("git daemon", _git(risks(flag="--access-hook"), "--access-hook")),
    ("git bundle create", _git(first="edit")),  # the file; then revisions
    ("git commit, git tag, git notes",
     _git(risks(read="-F --file -t"), "-F --file -t -m --message -C -c --reuse-message"
          " --reedit-message", overrides=risks(read="--template"))),
    ("git am, git hash-object", _git(files="read")),
    # git apply --directory=ROOT writes under ROOT; git mv/rm/checkout/restore write their
    # paths: one naming a protected directory is sensitive (the edit itself is not seen).
    ("git apply", _git(risks(read="--exclude --include"), "--directory --exclude --include"
                       " -p -C --whitespace", files="read",
                       option_checks=names(("--directory", _PROTECTED)))),
    ("git mv, git rm, git checkout, git restore, git reset, git stash",
     _git(values="-s --source --pathspec-from-file", risky=risks(read="--pathspec-from-file"),
          sensitive_re=_PROTECTED)),
    # what git reads: REV:PATH, paths after --, paths outside the work tree (an implied
    # --no-index); git-log(1), git-show(1), git-diff(1), git-cat-file(1), git-grep(1),
    # git-archive(1), git-ls-files(1) (-X/--exclude-from read a file).
    ("git diff, git log, git show, git whatchanged, git cat-file, git shortlog",
     _git(risks(flag="--no-index", colon_read="-L", read="-O"), "-L -S -G -O --author --grep"
          " --since --until --format --pretty -n --max-count --skip --skip-to --rotate-to",
          files="read", file_opts="--no-index", git_paths=True)),  # -O<orderfile> is read
    ("git blame", _git(risks(read="--contents -S --ignore-revs-file"), "--contents -L -S --date"
                       " --ignore-revs-file --ignore-rev", optional_opts="-C -M",
                       files="read")),
    # git-filter-repo(1) 2.38: each --*-callback is the body of a Python function it runs
    # (another language: sensitive, an allow must name it); --paths-from-file reads.
    ("git filter-repo", _git(risks(flag="--filename-callback --message-callback"
                                   " --name-callback --email-callback --refname-callback"
                                   " --blob-callback --commit-callback --tag-callback"
                                   " --reset-callback --file-info-callback",
                                   read="--paths-from-file --replace-text"),
                             "--filename-callback --message-callback --name-callback"
                             " --email-callback --refname-callback --blob-callback"
                             " --commit-callback --tag-callback --reset-callback"
                             " --file-info-callback --paths-from-file --replace-text")),
    # git-grep(1) -O[PAGER]/--open-files-in-pager[=PAGER]: PAGER is run through the shell.
    ("git grep", _git(risks(script="-O", read="-f"), "-e -f -A -B -C -m --max-depth"
                      " --threads", optional_opts="-O --open-files-in-pager", skip=1,
                      skip_opts="-e -f", git_paths=True,
                      overrides=risks(script="--open-files-in-pager"))),
    ("git archive", _git(risks(flag="-u --remote", edit="-o"), "-u -o --remote --prefix"
                         " --format --add-file", skip=1, git_paths=True)),
    ("git ls-files", _git(risks(read="-X --exclude-from"), "-X --exclude-from -x --exclude"
                          " --exclude-per-directory --with-tree --abbrev --format")),
)
