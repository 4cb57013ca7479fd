"""The project's tree as the spec needs it: its indexes."""

from __future__ import annotations

from dm_cc.sandbox.tree import Entry, Tree, inside


def test_the_indexes_find_paths_by_last_segment_and_directory_ignoring_case():
    tree = Tree.of(tuple(Entry(path, is_dir) for path, is_dir in (
        ("Secrets", True), ("Secrets/a.PEM", False), ("secrets-old", True), ("secrets-old/b", False),
        ("src", True), ("src/secrets", True), ("src/secrets/c", False), ("é", True),
        ("é/.env", False))))
    assert tree.by_last_segment()["a.pem"] == ["Secrets/a.PEM"]
    assert sorted(tree.folded_under("secrets")) == ["Secrets", "Secrets/a.PEM"]
    assert set(tree.not_ascii()) == {"é", "é/.env"}


def test_a_tree_knows_its_directories_links_and_each_directory_s_entries():
    tree = Tree.of((Entry("src", True), Entry("src/a.py", False), Entry("link", False, True),
                    Entry("empty", True)))
    assert tree.is_dir("src") and not tree.is_dir("link") and tree.is_link("link")
    assert tree.has("src/a.py") and not tree.has("src/b.py")
    assert tree.children() == {".": ["src", "link", "empty"], "src": ["src/a.py"], "empty": []}


def test_inside_is_the_directory_itself_or_below_it():
    assert inside("/p/src", "/p") and inside("/p", "/p/") and inside("/anything", "/")
    assert not inside("/pp", "/p") and not inside("/p", "/p/src")
