"""Test helpers shared across modules (not fixtures)."""


class CharTokenizer:
    """A fake tokenizer: one token per 4 characters, rounded up (exact, cheap)."""

    name = "chars"

    def count(self, text: str) -> int:
        return (len(text) + 3) // 4

    def truncate(self, text: str, max_tokens: int) -> str:
        return text[: max_tokens * 4]
