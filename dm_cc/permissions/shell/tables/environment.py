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
)
#: Name prefixes (compared upper-cased): ld.so(8) LD_*, dyld(1) DYLD_*, python(1) PYTHON*,
#: git(1) "ENVIRONMENT VARIABLES" GIT_*, npm-config NPM_CONFIG_*, bash's exported functions
#: BASH_FUNC_*, Cargo CARGO_*, pip PIP_*, Yarn YARN_*, lua(1) LUA_INIT/LUA_PATH/LUA_CPATH.
RISKY_ENV_PREFIXES = ("LD_", "DYLD_", "PYTHON", "GIT_", "NPM_CONFIG_", "BASH_FUNC_", "CARGO_",
                      "PIP_", "YARN_", "LUA_INIT", "LUA_PATH", "LUA_CPATH")
#: Name suffixes: tools' own pager/editor/askpass/options variables (SYSTEMD_PAGER,
#: SVN_EDITOR, GIT_ASKPASS, SBT_OPTS, ANT_OPTS ...).
RISKY_ENV_SUFFIXES = ("_PAGER", "_EDITOR", "_ASKPASS", "_OPTS", "_OPTIONS")


def risky_env(name: str) -> bool:
    """Does setting the variable ``name`` change what a command runs (``LD_PRELOAD``)?"""
    upper = name.upper()
    return (name in RISKY_ENV_NAMES or upper.startswith(RISKY_ENV_PREFIXES)
            or name.endswith(RISKY_ENV_SUFFIXES))
