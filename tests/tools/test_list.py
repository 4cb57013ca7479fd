from __future__ import annotations

from dm_cc.tools.list_dir import ListTool, tree

from .helpers import call, derive

TOOL = ListTool()


def make(root, *names):
    for name in names:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if name.endswith("/"):
            path.mkdir(exist_ok=True)
        else:
            path.write_text("x")


def test_a_tree_with_directories_first(ctx, project):
    make(project, "README.md", ".env", "src/app.py", "src/util/io.py", "docs/", ".git/HEAD",
         "node_modules/x/i.js", "src/__pycache__/a.pyc", ".venv/bin/python")
    out = call(TOOL, ctx)
    assert not out.is_error
    assert out.output == "\n".join([
        f"{project}/",
        "  docs/",
        "  src/",
        "    util/",
        "      io.py",
        "    app.py",
        "  .env",
        "  README.md",
    ])


def test_symlinks_show_their_target_and_are_not_followed(ctx, project, tmp_path):
    make(tmp_path, "elsewhere/secret.txt")
    (project / "link").symlink_to(tmp_path / "elsewhere")
    out = call(TOOL, ctx).output
    assert f"  link -> {tmp_path / 'elsewhere'}" in out and "secret" not in out


def test_the_listing_is_capped_breadth_first(project):
    make(project, *(f"top{i}.txt" for i in range(3)), *(f"a/f{i}.txt" for i in range(5)),
         "b/c/deep.txt")
    out = tree(str(project), 6)
    lines = out.splitlines()
    assert "  a/" in lines and "  b/ …" in lines and "  top0.txt" in lines
    assert lines[1:4] == ["  a/", "    f0.txt", "    … 4 more"]  # 5 at the top, 1 left for a/
    assert "(showing 6 entries; the listing is capped at 6" in out


def test_paths_that_are_not_directories_are_errors(ctx, project):
    make(project, "file.txt")
    assert "is a file" in call(TOOL, ctx, path="file.txt").output
    missing = call(TOOL, ctx, path="nope")
    assert missing.is_error and "not found" in missing.output


def test_requests_name_the_directory_itself(ctx, project):
    assert derive(TOOL, ctx) == [("list", ".")]
    assert derive(TOOL, ctx, path="src") == [("list", "src")]
    assert derive(TOOL, ctx, path="/var/log") == [
        ("list", "/var/log"), ("external_directory", "/var/log")]
