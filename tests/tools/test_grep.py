from __future__ import annotations

import shutil

import pytest

from dm_cc.tools.grep import MAX_LINE_CHARS, MAX_MATCHES, GrepTool

from .helpers import call, derive

HAVE_RG = shutil.which("rg") is not None


@pytest.fixture(params=["python", "ripgrep"])
def tool(request):
    if request.param == "ripgrep" and not HAVE_RG:
        pytest.skip("ripgrep (rg) is not on PATH")
    return GrepTool(use_ripgrep=request.param == "ripgrep")


def make(root, files):
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text if isinstance(text, bytes) else text.encode())


TREE = {
    "a.py": "import os\nTODO = 1\n",
    "b/c.py": "x = 1  # TODO: tidy\n",
    "b/d.txt": "TODO in text\n",
    "b.md": "no match here\nTODO last\n",
    ".hidden.cfg": "TODO hidden\n",
    ".git/config": "TODO git\n",
    "node_modules/m/index.js": "TODO dep\n",
    "img.bin": b"TODO\0binary",
}


def test_matches_as_file_line_text_in_path_order(tool, ctx, project):
    make(project, TREE)
    out = call(tool, ctx, pattern="TODO")
    assert not out.is_error
    assert out.output.splitlines() == [
        "a.py:2:TODO = 1",
        "b/c.py:1:x = 1  # TODO: tidy",
        "b/d.txt:1:TODO in text",
        "b.md:2:TODO last",
    ]


def test_hidden_files_are_searched_only_when_named(tool, ctx, project):
    make(project, {**TREE, ".github/ci.yml": "TODO ci\n"})
    assert call(tool, ctx, pattern="TODO", path=".hidden.cfg").output == ".hidden.cfg:1:TODO hidden"
    assert call(tool, ctx, pattern="TODO", path=".github").output == ".github/ci.yml:1:TODO ci"


def test_include_filters_by_file_name_at_any_depth(tool, ctx, project):
    make(project, TREE)
    out = call(tool, ctx, pattern="TODO", include="*.py")
    assert out.output.splitlines() == ["a.py:2:TODO = 1", "b/c.py:1:x = 1  # TODO: tidy"]
    assert call(tool, ctx, pattern="TODO", include="*.{md,txt}").output.splitlines() == [
        "b/d.txt:1:TODO in text", "b.md:2:TODO last"]


def test_path_may_be_a_directory_or_a_file(tool, ctx, project):
    make(project, TREE)
    assert call(tool, ctx, pattern="TODO", path="b").output.splitlines() == [
        "b/c.py:1:x = 1  # TODO: tidy", "b/d.txt:1:TODO in text"]
    assert call(tool, ctx, pattern="^import", path="a.py").output == "a.py:1:import os"


def test_regex_features_and_a_leading_dash(tool, ctx, project):
    make(project, {"f.txt": "--verbose flag\nfoo123\nFOO\n"})
    assert call(tool, ctx, pattern="--verbose").output == "f.txt:1:--verbose flag"
    assert call(tool, ctx, pattern=r"foo\d+$").output == "f.txt:2:foo123"
    assert call(tool, ctx, pattern="(?i)^foo$").output == "f.txt:3:FOO"


def test_no_match_is_not_an_error(tool, ctx, project):
    make(project, TREE)
    out = call(tool, ctx, pattern="nothing-like-this")
    assert not out.is_error and out.output.startswith("No matches for 'nothing-like-this'")


def test_invalid_regex_and_missing_path_are_errors(tool, ctx, project):
    make(project, TREE)
    bad = call(tool, ctx, pattern="(unclosed")
    assert bad.is_error and "unclosed" in bad.output
    missing = call(tool, ctx, pattern="x", path="nope")
    assert missing.is_error and "does not exist" in missing.output


def test_matches_are_capped_and_long_lines_cut(tool, ctx, project):
    make(project, {"many.txt": "hit\n" * (MAX_MATCHES + 50),
                   "long.txt": "hit " + "z" * (MAX_LINE_CHARS * 3) + "\n"})
    out = call(tool, ctx, pattern="hit").output.splitlines()
    assert len(out) == MAX_MATCHES + 2 and "there are more" in out[-1]
    assert out[0].startswith("long.txt:1:hit zzz") and out[0].endswith("[… line cut]")
    assert len(out[0]) < MAX_LINE_CHARS + 40


@pytest.mark.skipif(not HAVE_RG, reason="ripgrep (rg) is not on PATH")
def test_both_backends_agree(ctx, project):
    make(project, {**TREE, "src/x/y.py": "def TODO():\n    pass\n", "src/z.txt": "TODOTODO\n"})
    for args in ({"pattern": "TODO"}, {"pattern": r"TODO\b", "include": "*.py"},
                 {"pattern": "^T", "path": "b"}, {"pattern": "pass", "include": "src/**/*.py"}):
        python = call(GrepTool(use_ripgrep=False), ctx, **args).output
        assert call(GrepTool(), ctx, **args).output == python, args


@pytest.mark.skipif(not HAVE_RG, reason="ripgrep (rg) is not on PATH")
def test_ripgrep_retries_look_around_with_pcre2(ctx, project):
    make(project, {"f.txt": "foobar\nfoobaz\n"})
    out = call(GrepTool(), ctx, pattern="foo(?=baz)")
    assert out.output == "f.txt:2:foobaz" or (out.is_error and "PCRE2" in out.output)


def test_requests_name_the_search_root(ctx, project):
    tool = GrepTool()
    # grep shows contents, so its root is also a read (a denied file named directly
    # stays denied)
    assert derive(tool, ctx, pattern="x") == [("grep", "."), ("read", ".")]
    assert derive(tool, ctx, pattern="x", path="src", include="*.py") == [
        ("grep", "src"), ("read", "src")]
    assert derive(tool, ctx, pattern="x", path="~") == [
        ("grep", str(ctx.home)), ("external_directory", str(ctx.home)), ("read", str(ctx.home))]
