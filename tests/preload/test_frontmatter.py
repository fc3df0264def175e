"""The bounded front-matter reader (issue 34): the subset agents' rule files use,
and hostile input that a YAML loader would expand, recurse on or execute."""

from __future__ import annotations

import time

from jitctx.preload.frontmatter import MAX_LINES, split, split_list


def lines(text: str) -> list[str]:
    return text.split("\n")


def test_issue_34_the_subset_the_formats_use():
    fm = split(
        lines(
            "---\n"
            "description: House style # a comment\n"
            "globs: *.tsx, src/**/*.{css,scss}\n"
            "alwaysApply: false\n"
            'quoted: "a \\"b\\""\n'
            "single: 'it''s'\n"
            "flow: [a, \"b,c\", 'd']\n"
            "paths:\n"
            '  - "src/api/**/*.ts"\n'
            "  - lib/*.py\n"
            "empty:\n"
            "folded: >\n"
            "  one\n"
            "  two\n"
            "---\n"
            "body"
        )
    )
    assert fm.fields == {
        "description": "House style",
        "globs": "*.tsx, src/**/*.{css,scss}",
        "alwaysApply": False,
        "quoted": 'a "b"',
        "single": "it's",
        "flow": ("a", "b,c", "d"),
        "paths": ("src/api/**/*.ts", "lib/*.py"),
        "empty": None,
        "folded": "one two",
    }
    assert fm.body_start == 15 and fm.problems == ()
    assert split_list(fm.fields["globs"]) == ("*.tsx", "src/**/*.{css,scss}")
    assert split_list(fm.fields["paths"]) == ("src/api/**/*.ts", "lib/*.py")
    assert split_list("'a', \"b\"") == ("a", "b") and split_list(None) == ()


def test_issue_34_no_front_matter_or_not_closed_is_text():
    assert split(["# Title", "---"]).body_start == 0
    fm = split(["---", "a: b", "body without a closing line"])
    assert fm.body_start == 0 and fm.fields == {} and "not closed" in fm.problems[0]


def test_issue_34_anchors_aliases_and_tags_expand_nothing_and_run_nothing():
    laughs = ["---", 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    laughs += [
        f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)},*{chr(97 + i)},*{chr(97 + i)},*{chr(97 + i)},*{chr(97 + i)},*{chr(97 + i)},*{chr(97 + i)},*{chr(97 + i)},*{chr(97 + i)}]"
        for i in range(8)
    ]
    laughs += ["paths: !!python/object/apply:os.system ['touch /tmp/pwned']", "globs: !tag x", "z: [*i, *i, *i]", "---", "body"]
    t0 = time.perf_counter()
    fm = split(laughs)
    assert time.perf_counter() - t0 < 1.0
    assert not {"a", "b", "i", "paths", "globs"} & set(fm.fields)
    assert fm.fields["z"] == ("*i",) * 3  # an alias is the text it looks like: nothing is expanded
    assert sum("anchors and tags are not read" in p for p in fm.problems) == 11


def test_issue_34_deep_nesting_is_left_out_without_recursion():
    deep = "[" * 5000 + "]" * 5000
    t0 = time.perf_counter()
    fm = split(["---", f"globs: {deep}", "nested:", "  key: value", "  - - x", "{a: b}: c", "m: {a: 1}", "---"])
    assert time.perf_counter() - t0 < 1.0
    assert fm.fields["globs"] == ("[" * 4999 + "]" * 4999,)  # one glob of brackets (the glob reader refuses it), no recursion
    assert fm.fields["nested"] == ("- x",) and "m" not in fm.fields
    assert any("nested mappings" in p for p in fm.problems) and any("flow mappings" in p for p in fm.problems)


def test_issue_34_front_matter_is_bounded():
    huge = ["---"] + [f"k{i}: v" for i in range(MAX_LINES * 10)] + ["---", "body"]
    fm = split(huge)
    assert fm.body_start == 0 and fm.fields == {}  # past the bound: no front matter, the file is text
    wide = ["---", "a: " + "x" * 100_000, "---"]
    assert split(wide).body_start == 0
