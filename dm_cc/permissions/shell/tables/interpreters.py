"""Shells, interpreters and builtins that run code, and how their code is given.

A shell's ``-c STRING`` or heredoc is parsed again as shell (:mod:`..programs`); another
interpreter reading its program from a pipe makes the command dynamic; builtins in
``EVAL_BUILTINS`` evaluate parts of their arguments (array subscripts, arithmetic).
"""

from __future__ import annotations

from collections.abc import Mapping

from dm_cc.permissions.shell.tables import names, words

#: sh-family interpreters: ``-c STRING`` or a heredoc body is parsed again as shell.
#: Their options: bash(1) (GNU bash 5.2) "OPTIONS" and "INVOCATION"; dash(1), zsh(1),
#: ksh(1), fish(1), csh(1)/tcsh(1) take ``-c`` the same way.
SHELLS = words("sh bash zsh dash ksh mksh fish ash yash posh rbash csh tcsh")
#: Shells whose code is not sh code: fish(1) (``and``/``or``/``begin … end``, ``(cmd)``
#: substitutions) and csh(1)/tcsh(1) (``if (…) then``, ``foreach``). Their inline code is
#: parsed as sh for deny rules to see what it may run, but read as sh it is not modelled:
#: such a command can never be allowed outright.
NOT_SH_SHELLS = words("fish csh tcsh")
#: fish(1) 3.x "OPTIONS": those that give code inline (``-c``/``--command``, and
#: ``-C``/``--init-command``, run before it), those that name a file fish writes
#: (``-o``/``--debug-output``, ``-p``/``--profile``, ``--profile-startup``) and the
#: other options that take a value (``-d``/``--debug``, ``-f``/``--features``).
FISH_CODE_OPTS = words("-c --command -C --init-command")
FISH_WRITE_OPTS = words("-o --debug-output -p --profile --profile-startup")
FISH_VALUE_OPTS = FISH_CODE_OPTS | FISH_WRITE_OPTS | words("-d --debug -f --features")
#: Shell options that take a separate value (bash(1): ``-o``/``+o`` option-name,
#: ``-O``/``+O`` shopt_option, ``--rcfile``/``--init-file`` FILE).
SHELL_VALUE_OPTS = words("-o +o -O +O --rcfile --init-file")

#: Other interpreters: reading their program from a pipe makes the command dynamic.
INTERPRETERS = words("python python2 python3 perl ruby node nodejs php lua deno bun Rscript"
                     " R pypy pypy3 pwsh powershell tclsh wish julia irb osascript expect"
                     " luajit ts-node tsx jshell groovy")
#: Interpreters also run under a versioned name: the family, then digits and dots
#: (python3.12, pypy3.10, perl5.36, lua5.4, ruby3.2).
INTERPRETER_FAMILIES = ("python", "pypy", "perl", "ruby", "node", "php", "lua", "luajit", "tclsh",
                        "wish", "julia")
#: Interpreter options that supply the program inline (so stdin is data, not code).
INLINE_CODE_OPTS = words("-c -e -E -m --eval --print --command")
#: Per interpreter family (name without version digits): options supplying the program
#: inline; families not listed use INLINE_CODE_OPTS. From each one's usage: python(1)
#: (3.11) "-c command", "-m module"; perlrun(1) -e/-E; ruby(1) -e; php(1) -r; lua(1) -e;
#: node(1) (v20) -e/--eval, -p/--print; `bun --help`; `deno eval --help`; R(1) and
#: Rscript(1) -e; julia(1) -e/-E/--eval/--print; osascript(1) -e; pwsh
#: "about_Pwsh" -Command/-EncodedCommand; tclsh, wish, expect and irb have none.
INLINE_CODE_BY_FAMILY: Mapping[str, frozenset[str]] = names(
    ("python pypy", words("-c -m")),
    ("perl", words("-e -E")),
    ("ruby lua luajit R Rscript osascript", words("-e")),
    ("php", words("-r")),
    ("node nodejs bun", words("-e --eval -p --print")),
    ("deno", words("-e --eval")),
    ("julia", words("-e -E --eval --print")),
    ("pwsh powershell", words("-c -Command -command -EncodedCommand -e -ec")),
    ("tclsh wish expect irb", frozenset()),
)
#: Interpreter options taking a separate value (``python3 -W ignore``, ``node -r ./y``,
#: ``perl -I lib``). Generous on purpose: a value taken for the script only means the
#: program is looked for on stdin (dynamic when that is a pipe). Gathered from python(1),
#: node(1), perlrun(1), ruby(1) and pwsh's usage.
INTERPRETER_VALUE_OPTS = words(
    "-W -X -Q -r --require --import --loader --experimental-loader -C --conditions"
    " --env-file --input-type -I -M -m -x -D -d -c -z -F -E -l -f -K --title"
    " -File -file -ExecutionPolicy -WorkingDirectory -wd")
#: Subcommands of runtime front ends that come before the program (``deno run -``).
INTERPRETER_SUBCOMMANDS = words("run")

#: Builtins that evaluate parts of their arguments as code (array subscripts, arithmetic)
#: or assign variables by name: bash(1) "SHELL BUILTIN COMMANDS" and "ARITHMETIC
#: EVALUATION" (``let``, ``printf -v``, ``read``, ``mapfile``, ``test -v``, ``wait -p``).
EVAL_BUILTINS = words("let printf read mapfile readarray test [ compgen complete hash wait")
#: Builtin options whose value is a command run later (bash(1): ``mapfile -C callback``,
#: ``compgen``/``complete -C command``).
CALLBACK_OPTS = words("-C")
