"""The protected table looks at a path only with the globs that can match it (their
plain segments are in the path): the same answer as asking every glob, in order."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from dm_cc.permissions import DEFAULT_PROTECTED, PathContext, Protected, ProtectedPaths
from dm_cc.permissions.patterns import path_subject

SEGMENTS = [".git", ".GIT", "hooks", "config", ".envrc", ".ENVRC", "src", "site-packages",
            "x.pth", "bin", "activate", "activate.fish", ".husky", "HEAD", ".dm_cc",
            "policy.yaml", "a.code-workspace", ".github", "workflows", "ci.yml", "Ä", "ſrc",
            ".ıdea", "İ", "node_modules", "lib", "..", "."]
paths = st.lists(st.sampled_from(SEGMENTS), min_size=1, max_size=6).map("/".join)
absolute = st.booleans()


def every_glob(table: ProtectedPaths, name: str) -> Protected | None:
    subject = path_subject(name, table._context)
    return next((entry for glob, entry, _ in table._globs if glob.match(subject)), None)


EXTRA = DEFAULT_PROTECTED.with_extra(
    [Protected("deploy/{prod,stage}/*.sh", "runs"), Protected("~/.bashrc", "home"),
     Protected("[Mm]akefile", "make")], git_dirs=["/srv/repo.git"])


@settings(max_examples=500, deadline=None)
@given(paths, absolute)
def test_the_index_answers_as_every_glob_would(path, outside):
    name = f"/srv/{path}" if outside else path
    for table in (DEFAULT_PROTECTED, EXTRA,
                  ProtectedPaths(context=PathContext(root="/p", home="/home/me"))):
        assert table.why([name]) == every_glob(table, name), name
