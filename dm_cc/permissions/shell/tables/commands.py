"""Smaller facts about commands: where the system's programs live, git's global options,
redirect targets that are not files, and programs that never run their arguments."""

from __future__ import annotations

from dm_cc.permissions.shell.tables import words

#: Directories whose programs are the system's own: a command word with a path elsewhere
#: (`./git`, `/tmp/x/rm`) is sensitive (an allow rule must name the path). The FHS 3.0
#: bin dirs, Homebrew's on Apple silicon, NixOS's system profile.
SYSTEM_BIN_DIRS = words("/bin /usr/bin /usr/local/bin /sbin /usr/sbin /usr/local/sbin"
                        " /opt/homebrew/bin /run/current-system/sw/bin")

#: git options before the subcommand, from git(1) (git 2.39) "OPTIONS": those taking a
#: value, those that are sensitive (they set configuration or the helper path, or name a
#: git directory whose config -- core.fsmonitor, core.pager, hooks -- runs commands), and
#: those naming a directory git reads.
GIT_GLOBAL_VALUE = words("-C -c --git-dir --work-tree --namespace --super-prefix --config-env"
                         " --list-cmds --attr-source")
GIT_GLOBAL_SENSITIVE = words("-c --config-env --exec-path --git-dir --work-tree")
GIT_GLOBAL_PLACES = words("-C --git-dir --work-tree")

#: git-config(1) settings (git 2.39) whose value is a command git runs, most through the
#: shell: core.sshCommand, core.pager, core.editor, core.askPass, core.fsmonitor,
#: core.gitProxy, sequence.editor, diff.external, pager.<cmd>, credential.helper (a "!"
#: value is shell code), gpg.program, interactive.diffFilter, uploadpack.packObjectsHook,
#: remote.<name>.uploadpack/receivepack; and the per-driver ones: diff.<driver>.command/
#: textconv, merge.<driver>.driver, filter.<driver>.clean/smudge/process,
#: difftool/mergetool/guitool/browser/man.<tool>.cmd, sendemail.[<id>.]tocmd/cccmd/
#: sendmailcmd. Compared lower-cased (git's keys are case-insensitive but for the middle
#: part, which these patterns do not pin).
GIT_COMMAND_KEYS = (
    r"core\.(sshcommand|pager|editor|askpass|fsmonitor|gitproxy)|sequence\.editor"
    r"|diff\.external|pager\..+|credential\.(.+\.)?helper|gpg\.(.+\.)?program"
    r"|interactive\.difffilter|uploadpack\.packobjectshook|remote\..+\.(uploadpack|receivepack)"
    r"|diff\..+\.(command|textconv)|merge\..+\.driver|filter\..+\.(clean|smudge|process)"
    r"|(difftool|mergetool|guitool|browser|man)\..+\.cmd|sendemail\.(.+\.)?(tocmd|cccmd|sendmailcmd)"
)

#: Other programs' settings whose value is a command they run, by program (the key
#: compared lower-cased): npm-config(7) (npm 9; yarn 1 and pnpm read the same .npmrc
#: keys) script-shell, shell, editor, browser, git, viewer; the Cargo book
#: "Configuration" (1.74) build.rustc, build.rustc-wrapper, build.rustc-workspace-wrapper,
#: build.rustdoc, target.<triple or cfg>.runner/linker, host.linker.
_NPM_COMMAND_KEYS = r"script-shell|shell|editor|browser|git|viewer"
COMMAND_SETTINGS: dict[str, str] = {
    "git": GIT_COMMAND_KEYS,
    "npm": _NPM_COMMAND_KEYS, "yarn": _NPM_COMMAND_KEYS, "pnpm": _NPM_COMMAND_KEYS,
    "cargo": r"build\.(?:rustc|rustc-wrapper|rustc-workspace-wrapper|rustdoc)"
             r"|target\..+\.(?:runner|linker)|host\.linker",
}

#: Redirect targets that are not files (the kernel's and udev's device nodes).
NON_FILES = words("/dev/null /dev/stdout /dev/stderr /dev/stdin /dev/tty /dev/zero")

#: Programs whose arguments are never a command they run (so no speculative inner
#: command is offered to deny rules for them): `echo rm -rf /` only prints. Bash builtins
#: (bash(1) "SHELL BUILTIN COMMANDS"), coreutils that print or test, process tools, build
#: tools and VCSs whose operands are targets or paths.
NOT_RUNNERS = words(
    "echo printf ls dir vdir which type whereis whatis apropos help man info command"
    " hash true false test [ [[ pwd basename dirname realpath readlink printenv"
    " export declare typeset local readonly unset set shopt alias unalias trap"
    " return exit break continue shift wait jobs fg bg kill pkill pgrep killall"
    " make cmake ninja meson bazel just task git hg svn cd pushd popd dirs umask ulimit"
    " getopts read mapfile readarray let history fc complete compgen")
