from __future__ import annotations

from channels.text import split_text, truncate


def test_short_text_is_one_part() -> None:
    assert split_text("hello", 100) == ["hello"]


def test_prefers_paragraph_breaks() -> None:
    text = ("a" * 60 + "\n\n") * 5
    parts = split_text(text, 150)
    assert all(len(p) <= 150 for p in parts)
    assert all(p.strip("a") == "" or "\n\n" in p for p in parts)
    assert "".join(parts).replace("\n", "") == text.replace("\n", "")


def test_code_fence_is_closed_and_reopened() -> None:
    code = "```sql\n" + "\n".join(f"select {i};" for i in range(100)) + "\n```\nafter"
    parts = split_text(code, 200)
    assert len(parts) > 2
    for part in parts:
        assert len(part) <= 200
        assert part.count("```") % 2 == 0, part
    assert all(p.startswith("```sql") for p in parts[1:-1])
    joined = "\n".join(parts)
    for i in range(100):
        assert f"select {i};" in joined


def test_unbreakable_text_is_cut_hard() -> None:
    parts = split_text("x" * 1000, 300)
    assert [len(p) for p in parts] == [300, 300, 300, 100]


def test_truncate() -> None:
    assert truncate("abcdef", 4) == "abc…"
    assert truncate("abc", 4) == "abc"


def test_tilde_fence_is_closed_with_tildes() -> None:
    code = "~~~\n" + "\n".join(f"line {i}" for i in range(80)) + "\n~~~"
    parts = split_text(code, 200)
    assert len(parts) > 1
    for part in parts:
        assert part.startswith("~~~")
        assert part.rstrip().endswith("~~~")
        assert "```" not in part


def test_a_cut_never_leaves_emphasis_or_links_open() -> None:
    sentence = "plain words here and **bold words that go on** and [a link](https://x.io/a_(b)) "
    parts = split_text(sentence * 40, 300)
    assert len(parts) > 5
    for part in parts:
        assert len(part) <= 300
        assert part.count("**") % 2 == 0, part
        assert part.count("[") == part.count("](https"), part


def test_whole_blocks_stay_together() -> None:
    table = "| a | b |\n|---|---|\n" + "\n".join(f"| {i} | x |" for i in range(8))
    text = "intro " * 20 + "\n\n" + table + "\n\n" + "outro " * 20
    parts = split_text(text, len(table) + 10)
    assert table in parts


def test_a_fence_line_with_a_language_does_not_close_a_code_block() -> None:
    # CommonMark: only a bare fence closes; "```py" inside a block is code (the old splitter
    # toggled on it, and a fence line longer than the limit made it loop forever)
    code = "```md\n" + "\n".join(["```py", "x = 1"] * 30) + "\n```"
    parts = split_text(code, 100)
    assert all(len(p) <= 100 for p in parts)
    assert all(p.startswith("```md") and p.endswith("```") for p in parts)
    assert split_text("```" + "x" * 200 + "\n" + "y " * 100, 64)  # terminates


def test_a_code_block_whose_opener_alone_fills_a_part_stays_code() -> None:
    opener = "```" + "lang" * 4 + "](https://x.io/a_(b)?c=d&e=f)" * 2 + "| a | b |"  # long info
    parts = split_text(opener + "\n|---|---|\n&amp;", 100)  # 102 characters
    assert all(len(p) <= 100 for p in parts)
    assert all(p.startswith("```langlanglanglang\n") for p in parts)  # shortened, still code
    assert "&amp;" in parts[-1]
