"""The modelled subset of bash: the one allowlist of tree-sitter-bash node kinds and tokens.

:mod:`..walk` checks every node of a tree (named kinds and anonymous tokens alike) against
``MODELLED``; a kind or token not on it makes the line dynamic (it asks, and its word scan
is offered to the deny rules, as for a line that does not parse). Each entry says which
part of the analysis models it. ``OUTSIDE`` lists, for the docs and the tests, what the
grammar has that is not modelled and why; together the two name every visible kind of the
grammar (``tests/permissions/test_shell_model.py`` checks this against the installed
tree-sitter-bash, and that docs/shell.md shows these tables as they are here).

``OUTSIDE_SHAPES`` are constructs tree-sitter reads as plain words or as a kind that is
otherwise modelled: :mod:`..walk` recognises each at the node named.

Sources: bash(1) (GNU bash 5.2) "SHELL GRAMMAR", "REDIRECTION", "Pattern Matching";
tree-sitter-bash 0.25 ``grammar.js`` (its 59 named kinds and 122 visible tokens).
"""

from __future__ import annotations

from dm_cc.permissions.shell.tables import names

_WORD = "a word: quotes and escapes removed, expansions and globs make it dynamic (quoting)"
_STRUCTURE = "structure: every command inside is walked (walk)"
_ARITH = "arithmetic: stored values it evaluates are tracked (evaluation.arithmetic)"
_TEST = "a test: its words judged, evaluated operands tracked (walk.test)"
_EXPANSION = "inside ${..}: the word is dynamic; ${!x}, ${x@P}, ${x:=v} tracked (walk._expansion)"
_REDIRECT = "a redirect: a read or edit request of its target (walk.redirect, walk._stdin)"
_DECLARE = "a declaration: risky names and evaluated values noted (walk.declaration)"

#: Every node kind and token the analysis models completely, and what models it.
MODELLED = names(
    ("program list ; & && || ( ) { }", _STRUCTURE),
    ("pipeline | |&", "a pipeline: the next command's stdin is a pipe (walk._piped); "
     "`|&` pipes stderr too (`2>&1 |`)"),
    ("subshell compound_statement do_group", _STRUCTURE),
    ("redirected_statement", "a statement's redirects: a simple command's own, a compound "
     "command's reach every command inside (walk._encloses)"),
    ("if_statement elif_clause else_clause if then elif else fi", _STRUCTURE),
    ("while_statement while until do done", "a loop (`until` is `while` negated): "
     "condition and body walked"),
    ("for_statement for in", "a `for` loop: its variable's values tracked (walk._loop)"),
    ("c_style_for_statement (( ))", _ARITH),
    ("case_statement case_item case esac ;;", "`case`: the word, every pattern and every "
     "item's commands walked"),
    ("function_definition function", "a function: its body walked, its stdin the caller's "
     "(walk._encloses)"),
    ("negated_command !", "`!`: the command walked"),
    ("command command_name", "a simple command: its words, stdin and risky assignments "
     "(walk.command), judged by the program tables (judge)"),
    ("word number concatenation string string_content raw_string \" ` `` $", _WORD),
    ("ansi_c_string", "$'..': decoded (quoting.ansi_c)"),
    ("translated_string", "$\"..\": read as \"..\" (walk._collect_all)"),
    ("brace_expression ..", "brace expansion, done like bash (quoting)"),
    ("simple_expansion expansion variable_name special_variable_name ${ # ## % %% / // /# "
     "/% ,, ^^ : := :- :+ :? - + = ? @ * U u L Q E P A K a k", _EXPANSION),
    ("command_substitution $(", "`$( )` and backticks: walked; escaped backticks read "
     "again (walk._backticks)"),
    ("process_substitution <( >(", "`<( )`, `>( )`: walked; a file read from it is a pipe"),
    ("arithmetic_expansion $(( $[ binary_expression unary_expression postfix_expression "
     "parenthesized_expression ternary_expression ++ -- += -= *= /= %= **= <<= >>= &= ^= "
     "|= ** ^ , ~ != == <= >=", _ARITH),
    ("subscript [ ]", "a subscript: evaluated as arithmetic (evaluation), `[ ]` a test"),
    ("test_command [[ ]] test_operator =~ -a -o regex", _TEST),
    ("extglob_pattern", "a `case` or `[[ == ]]` pattern: a plain glob (an extglob "
     "operator is outside, walk)"),
    ("variable_assignment variable_assignments array", "an assignment: static values kept, "
     "risky names noted (walk._visit, walk.assignment)"),
    ("declaration_command declare typeset export readonly local", _DECLARE),
    ("unset_command unset", _DECLARE),
    ("file_redirect file_descriptor > >> >| &> &>> <", _REDIRECT),
    (">& <&", "a descriptor copied (`2>&1`, `<&0`) or, for `>&`, a file: as `&>` "
     "(a target that is neither a digit, `-` nor a static word is outside, walk)"),
    (">&- <&-", "a descriptor closed"),
    ("heredoc_redirect heredoc_start heredoc_body heredoc_content heredoc_end << <<-",
     "a heredoc: the body bash reads (source), a shell's stdin (walk._stdin), "
     "backticks in it (walk.heredoc)"),
    ("herestring_redirect <<<", "a here-string: a shell's stdin (walk._stdin)"),
    ("comment", "a comment: ignored, as bash does"),
)

#: What the grammar has that is not modelled: each makes the line dynamic.
OUTSIDE = names(
    ("select", "`select` loop: reads the choice from stdin and prompts, looping "
     "until `break`"),
    (";& ;;&", "`case` fall-through (`;&` runs the next item's commands too) and "
     "`;;&` (tests the next patterns)"),
    ("$`", "`$` before a backtick: bash reads `$` literally, then the backticks"),
    ("unsetenv", "not bash: tree-sitter reads `unsetenv X` as `unset`, bash runs a "
     "program named `unsetenv`"),
)

#: Constructs tree-sitter reads as other kinds (words, a modelled redirect): recognised
#: where the walk reads them.
OUTSIDE_SHAPES = names(
    ("coproc", "`coproc CMD`: runs CMD in the background wired to descriptors in the "
     "array COPROC (walk.command)"),
    ("{NAME}>", "`{fd}>f`, `{fd}<f`: opens a descriptor and stores its number in fd "
     "(walk.command)"),
    (">&WORD", "a descriptor copied or moved from what is not a plain digit, `-` or "
     "static file (`>&$fd`, `2>&3-`, `<&foo`) (walk.redirect)"),
    ("@(..)", "extglob patterns `?(..)` `*(..)` `+(..)` `@(..)` `!(..)` (walk)"),
)
