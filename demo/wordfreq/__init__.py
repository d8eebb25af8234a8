"""Count the most frequent words of a text file."""

from __future__ import annotations

import re
from pathlib import Path

WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?")


def top_words(path: Path, n: int = 10) -> list[tuple[str, int]]:
    """The `n` most frequent words of the file at `path`, most frequent first."""
    text = Path(path).read_text(encoding="utf-8")
    counts: dict[str, int] = {}
    for word in WORD.findall(text):
        counts[word] = counts.get(word, 0) + 1
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return ranked[:n]
