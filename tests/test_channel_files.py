from __future__ import annotations

from pathlib import Path

import pytest

from channels.base import FileTooLarge
from channels.files import free_path, outgoing_size, safe_name


def test_safe_name_keeps_only_a_plain_name() -> None:
    assert safe_name("report.pdf") == "report.pdf"
    assert safe_name("../../etc/passwd") == "passwd"
    assert safe_name("a/b\\c?.txt") == "b_c_.txt"
    assert safe_name(".hidden") == "hidden"
    assert safe_name("..") == "file"
    assert safe_name("", "fallback.bin") == "fallback.bin"


def test_free_path_numbers_taken_names(tmp_path: Path) -> None:
    dest = tmp_path / "uploads"
    first = free_path(dest, "a.pdf")
    first.write_text("x")
    (dest / "a-1.pdf").symlink_to(tmp_path / "elsewhere")
    assert first == dest / "a.pdf"
    assert free_path(dest, "a.pdf") == dest / "a-2.pdf"


async def test_outgoing_size_refuses_a_file_over_the_limit(tmp_path: Path) -> None:
    path = tmp_path / "report.pdf"
    path.write_bytes(b"x" * 10)
    assert await outgoing_size(path, 10) == 10
    with pytest.raises(FileTooLarge) as info:
        await outgoing_size(path, 9)
    assert (info.value.name, info.value.size, info.value.limit) == ("report.pdf", 10, 9)
