import tempfile
import unittest
from pathlib import Path

from wordfreq import top_words


class TopWords(unittest.TestCase):
    def write(self, text: str) -> Path:
        with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as handle:
            handle.write(text)
        self.addCleanup(Path(handle.name).unlink)
        return Path(handle.name)

    def test_most_frequent_first(self) -> None:
        path = self.write("b a b c b a")
        self.assertEqual(top_words(path, 2), [("b", 3), ("a", 2)])

    def test_case_is_ignored(self) -> None:
        path = self.write("The cat saw the dog. THE END")
        self.assertEqual(top_words(path, 1), [("the", 3)])


if __name__ == "__main__":
    unittest.main()
