"""Environment variables whose value changes what a command runs (``LD_PRELOAD=x cmd``).

An assignment of one of these before a command, in ``export``/``declare``, or through a
wrapper (``env``, ``sudo``, ``systemd-run -E``) is a sensitive token: no prefix rule alone
may allow it. Each group names the documentation its variables come from.
"""

from __future__ import annotations

from dm_cc.permissions.shell.tables import words

RISKY_ENV_NAMES = words(
    # bash(1), "Shell Variables" and "INVOCATION" (GNU bash 5.2); zsh(1) "STARTUP/SHUTDOWN
    # FILES" for ZDOTDIR; readline(3) for INPUTRC; $SHELL and $TERMINAL are what programs
    # spawn as a shell or a terminal
    "PATH BASH_ENV ENV PROMPT_COMMAND SHELLOPTS BASHOPTS PS4 IFS HOME ZDOTDIR SHELL INPUTRC"
    " TERMINAL"
    # environ(7): the editor, pager and browser other programs start; man(1) (man-db 2.11):
    # MANPAGER, MANOPT; less(1) (less 590): LESSOPEN, LESSCLOSE, LESSKEY, LESSKEYIN, LESS;
    # Vim's ":help startup": VIMINIT, EXINIT, MYVIMRC, GVIMINIT; gh(1): GH_BROWSER
    " EDITOR VISUAL PAGER BROWSER MANPAGER MANOPT LESSOPEN LESSCLOSE LESSKEY LESSKEYIN LESS"
    " VIMINIT EXINIT MYVIMRC GVIMINIT GH_BROWSER"
    # programs run to ask for a password: ssh(1) SSH_ASKPASS, sudo(8) SUDO_ASKPASS
    " SSH_ASKPASS SUDO_ASKPASS"
    # code loaded by a runtime: java(1) (JDK 9+) "Using the JDK_JAVA_OPTIONS Launcher
    # Environment Variable", JAVA_TOOL_OPTIONS (JVM TI); `node --help` (Node 20);
    # perlrun(1) "ENVIRONMENT"; ruby(1) "ENVIRONMENT"; PHP manual "The configuration file";
    # erl(1) "Environment variables"; R's ?Startup; .NET "startup hooks" design doc;
    # glibc iconv(3) for GCONV_PATH; openssl config(5) for OPENSSL_CONF
    " JAVA_TOOL_OPTIONS _JAVA_OPTIONS JDK_JAVA_OPTIONS CLASSPATH JAVA_HOME"
    " NODE_OPTIONS NODE_PATH NODE_REPL_EXTERNAL_MODULE PERL5OPT PERL5LIB PERLLIB PERL5DB"
    " RUBYOPT RUBYLIB PHPRC PHP_INI_SCAN_DIR ERL_AFLAGS ERL_ZFLAGS ERL_LIBS"
    " R_PROFILE R_PROFILE_USER R_ENVIRON R_ENVIRON_USER DOTNET_STARTUP_HOOKS GCONV_PATH"
    " OPENSSL_CONF"
    # build tools: the Cargo book "Environment Variables" and rustup; `go help environment`;
    # the GNU make manual, "Variables from the Environment" and implicit-rule
    # variables; CMake "CMAKE_TOOLCHAIN_FILE"; Gradle and Maven user guides; Bundler and
    # RubyGems ("gem help environment")
    " RUSTC RUSTC_WRAPPER RUSTDOC RUSTFLAGS RUSTDOCFLAGS RUSTC_WORKSPACE_WRAPPER RUSTUP_TOOLCHAIN"
    " GOFLAGS GOROOT GOENV GOPATH GOTOOLCHAIN MAKEFLAGS MAKEFILES GNUMAKEFLAGS CC CXX CPP LD"
    " CMAKE_TOOLCHAIN_FILE GRADLE_USER_HOME GRADLE_OPTS MAVEN_OPTS BUNDLE_GEMFILE GEM_HOME"
    " GEM_PATH"
    # where a tool reads its configuration (which can name programs to run): docker(1)
    # "Environment variables", kubectl's KUBECONFIG, the XDG Base Directory Specification,
    # curl(1) CURL_HOME, wget(1) WGETRC, AWS CLI "Environment variables", rg(1)
    # RIPGREP_CONFIG_PATH, psql(1) PSQLRC, hg(1) HGRCPATH, svn's SVN_SSH, rsync(1)
    # RSYNC_RSH and RSYNC_CONNECT_PROG
    " DOCKER_HOST DOCKER_CONFIG KUBECONFIG XDG_CONFIG_HOME XDG_CONFIG_DIRS CURL_HOME WGETRC"
    " AWS_CONFIG_FILE RIPGREP_CONFIG_PATH PSQLRC HGRCPATH SVN_SSH RSYNC_RSH RSYNC_CONNECT_PROG"
    # bash(1) "Shell Variables" (GNU bash 5.2, checked with `man bash` here): CDPATH (which
    # directory `cd x` enters), GLOBIGNORE/EXECIGNORE (what a glob and a PATH search see),
    # BASH_XTRACEFD (where `set -x` writes), HISTFILE, FCEDIT (the editor `fc` runs), TMPDIR
    # (where bash and mktemp create files), BASH_LOADABLES_PATH (`enable -f`), HOSTFILE,
    # BASH_COMPAT
    " CDPATH GLOBIGNORE EXECIGNORE BASH_XTRACEFD HISTFILE FCEDIT TMPDIR BASH_LOADABLES_PATH"
    " HOSTFILE BASH_COMPAT"
    # proxies, honoured by curl(1) 7.88 "ENVIRONMENT", wget(1) 1.21 "ENVIRONMENT", git, pip,
    # npm ...: every request can be sent through (and read by) another host
    " http_proxy https_proxy ftp_proxy all_proxy no_proxy HTTP_PROXY HTTPS_PROXY FTP_PROXY"
    " ALL_PROXY NO_PROXY"
    # TLS trust and key logging: curl(1) 7.88 CURL_CA_BUNDLE, SSL_CERT_DIR, SSL_CERT_FILE,
    # SSLKEYLOGFILE (writes session keys to that file), QLOGDIR (writes a file per
    # connection); Python requests REQUESTS_CA_BUNDLE; `node --help` NODE_EXTRA_CA_CERTS
    " CURL_CA_BUNDLE SSL_CERT_DIR SSL_CERT_FILE SSLKEYLOGFILE QLOGDIR REQUESTS_CA_BUNDLE"
    " NODE_EXTRA_CA_CERTS"
    # options taken from the environment: file(1) 5.44 MAGIC (the magic file read);
    # make(1) 4.3 MFLAGS; zip(1) 3.0 ZIP, ZIPOPT; unzip(1) 6.0 UNZIP, UNZIPOPT, ZIPINFO;
    # gzip(1) 1.12 GZIP; xz(1) 5.4 XZ_DEFAULTS, XZ_OPT; tar(1) 1.34 TAPE (the default
    # archive); `pytest --help` (pytest 9.0) PYTEST_ADDOPTS, PYTEST_PLUGINS (plugins
    # imported at start-up); less(1) 590 LESSEDIT (the editor command), LESSHISTFILE
    # (written), LESSSECURE, LESSKEY_SYSTEM, LESSKEYIN_SYSTEM; ssh(1) SSH_ASKPASS_REQUIRE,
    # SSH_AUTH_SOCK; wget(1) WGET_ASKPASS (by the _ASKPASS suffix)
    " MAGIC MFLAGS ZIP ZIPOPT UNZIP UNZIPOPT ZIPINFO GZIP XZ_DEFAULTS XZ_OPT TAPE"
    " PYTEST_ADDOPTS PYTEST_PLUGINS LESSEDIT LESSHISTFILE LESSSECURE LESSKEY_SYSTEM"
    " LESSKEYIN_SYSTEM SSH_ASKPASS_REQUIRE SSH_AUTH_SOCK"
    # bzip2(1) 1.0.8 reads BZIP2 and BZIP as options; ack(1) ACKRC (its options file),
    # ACK_PAGER_COLOR; bat(1) BAT_PAGER
    # (by the suffix); fzf(1) FZF_DEFAULT_OPTS_FILE
    " BZIP2 BZIP ACKRC ACK_PAGER_COLOR FZF_DEFAULT_OPTS_FILE"
    # compilers run by build tools: gcc(1) 12.2 "ENVIRONMENT" (GCC_EXEC_PREFIX,
    # COMPILER_PATH, DEPENDENCIES_OUTPUT and SUNPRO_DEPENDENCIES write a file); the GNU make
    # manual's implicit-rule variables (CFLAGS ... can name -fplugin=, -wrapper, -B)
    " GCC_EXEC_PREFIX COMPILER_PATH DEPENDENCIES_OUTPUT SUNPRO_DEPENDENCIES CFLAGS CXXFLAGS"
    " CPPFLAGS LDFLAGS LDLIBS"
)
#: bash(1) "PROMPTING" and "Shell Variables" (GNU bash 5.2): PROMPT_COMMAND is run as a
#: command before each prompt; the prompt strings are expanded (command substitution
#: included) when printed -- PS4 before each command traced by ``set -x``. Their values are
#: judged as code.
CODE_VARIABLES = words("PROMPT_COMMAND")
PROMPT_VARIABLES = words("PS0 PS1 PS2 PS3 PS4")

#: Variables whose value is a command line that programs run (environ(7) EDITOR, VISUAL,
#: PAGER, BROWSER, SHELL; man(1) MANPAGER; less(1) 590 LESSOPEN/LESSCLOSE (a leading ``|``
#: pipes), LESSEDIT; bash(1) FCEDIT; git(1) "ENVIRONMENT VARIABLES" GIT_SSH and the
#: *_COMMAND/*_EDITOR/*_PAGER/*_ASKPASS ones; ssh(1) SSH_ASKPASS, sudo(8) SUDO_ASKPASS;
#: rsync(1) RSYNC_RSH, RSYNC_CONNECT_PROG; svn SVN_SSH; TERMINAL; a shell other programs
#: run their scripts with: npm-config(7) script-shell, autoconf's CONFIG_SHELL; the
#: programs build tools run: the GNU make manual's "Variables Used by Implicit Rules" CC,
#: CXX, CPP, LD, AR, AS, FC; the Cargo book RUSTC, RUSTC_WRAPPER, RUSTDOC): the value is judged as
#: shell code, so a deny rule sees what runs (``GIT_SSH_COMMAND='rm x' git fetch``).
COMMAND_VARIABLES = words("EDITOR VISUAL PAGER MANPAGER BROWSER SHELL TERMINAL FCEDIT"
                          " LESSOPEN LESSCLOSE LESSEDIT GIT_SSH SSH_ASKPASS SUDO_ASKPASS"
                          " RSYNC_RSH RSYNC_CONNECT_PROG SVN_SSH GIT_EXTERNAL_DIFF CC CXX CPP LD AR AS FC RUSTC"
                          " RUSTC_WRAPPER RUSTC_WORKSPACE_WRAPPER RUSTDOC")
COMMAND_SUFFIXES = ("_COMMAND", "_CMD", "_PAGER", "_EDITOR", "_ASKPASS", "_SHELL")

#: Name prefixes (compared upper-cased): ld.so(8) LD_*, dyld(1) DYLD_*, python(1) PYTHON*,
#: git(1) "ENVIRONMENT VARIABLES" GIT_*, npm-config NPM_CONFIG_*, bash's exported functions
#: BASH_FUNC_*, Cargo CARGO_*, pip PIP_*, Yarn YARN_*, lua(1) LUA_INIT/LUA_PATH/LUA_CPATH.
RISKY_ENV_PREFIXES = ("LD_", "DYLD_", "PYTHON", "GIT_", "NPM_CONFIG_", "BASH_FUNC_", "CARGO_",
                      "PIP_", "YARN_", "LUA_INIT", "LUA_PATH", "LUA_CPATH")
#: Name suffixes, by what a tool does with such a variable (a rule over the names, not a
#: list): its pager, editor or askpass program (SYSTEMD_PAGER, SVN_EDITOR, GIT_ASKPASS);
#: extra options or arguments it reads as if given on its command line (SBT_OPTS,
#: ANT_OPTS, tar(1) TAR_OPTIONS, grep(1) GREP_OPTIONS, PYTEST_ADDOPTS, perlrun(1) PERL5OPT,
#: ruby(1) RUBYOPT, man(1) MANOPT, xz(1) XZ_OPT; Maven 3.9 MAVEN_ARGS, Ant ANT_ARGS,
#: fzf(1) FZF_DEFAULT_OPTS; compiler and tool flags: RUSTFLAGS, CGO_CFLAGS, DENO_FLAGS);
#: a command it runs (fzf(1) FZF_DEFAULT_COMMAND, GIT_SSH_COMMAND, PROMPT_COMMAND,
#: *_CMD); a configuration file or directory it loads, which can name programs to run
#: (bat(1) BAT_CONFIG_PATH, gcloud CLOUDSDK_CONFIG, Terraform TF_CLI_CONFIG_FILE,
#: RIPGREP_CONFIG_PATH, npm's NPM_CONFIG_USERCONFIG, STARSHIP_CONFIG).
RISKY_ENV_SUFFIXES = ("_PAGER", "_EDITOR", "_ASKPASS", "_OPTS", "_OPTIONS", "_ADDOPTS", "OPT",
                      "_ARGS", "FLAGS", "_COMMAND", "_CMD", "_CONFIG", "_CONFIG_FILE",
                      "_CONFIG_PATH", "_CONFIG_DIR", "_CONFIG_HOME", "_RC", "RC_PATH")


#: bash(1) "Shell Variables" (GNU bash 5.2): BASH_CMDS is the hash table of command
#: paths (``BASH_CMDS[ls]=/bin/rm`` makes ``ls`` run /bin/rm), BASH_ALIASES the alias table
#: (``BASH_ALIASES[ls]=rm``): an assignment to either re-points a command name.
COMMAND_TABLES = words("BASH_CMDS BASH_ALIASES")


def risky_env(name: str) -> bool:
    """Does setting the variable ``name`` change what a command runs (``LD_PRELOAD``)?
    An element (``PATH[0]``, ``BASH_CMDS[ls]``) sets its array's variable."""
    name = name.partition("[")[0]
    if name in COMMAND_TABLES:
        return True
    upper = name.upper()
    return (name in RISKY_ENV_NAMES or upper.startswith(RISKY_ENV_PREFIXES)
            or name.endswith(RISKY_ENV_SUFFIXES) or runs_value(name))


def runs_value(name: str) -> bool:
    """Is the value of the variable ``name`` a command line some program runs?"""
    return name in COMMAND_VARIABLES or name.upper().endswith(COMMAND_SUFFIXES)
