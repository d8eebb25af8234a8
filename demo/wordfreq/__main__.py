"""`python -m wordfreq FILE [N]`: print the N (default 10) most frequent words."""

from __future__ import annotations

import sys
from pathlib import Path

from . import top_words


def main(argv: list[str]) -> int:
    if not argv or len(argv) > 2:
        print("usage: python -m wordfreq FILE [N]", file=sys.stderr)
        return 2
    n = int(argv[1]) if len(argv) == 2 else 10
    for word, count in top_words(Path(argv[0]), n):
        print(f"{count:8d}  {word}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
