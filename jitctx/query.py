"""Validation shared by every Query: counts, patterns, choices, flags.

Owns turning loosely typed adapter input into checked values, with errors
that name the bad value and say what to pass instead. No I/O.
"""

from __future__ import annotations

from .errors import QueryError

__all__ = ["check_bool", "check_choice", "check_count", "check_pattern", "check_tokens"]


def check_count(name: str, value: object, *, minimum: int = 1, maximum: int | None = None, clamp: bool = False, hint: str | None = None) -> tuple[int, str | None]:
    """An integer count; returns (value, notice). Booleans and floats are refused.

    Above ``maximum``: clamped with a notice when ``clamp``, else an error.
    ``hint`` replaces the generic advice in the errors.
    """
    if isinstance(value, bool) or not isinstance(value, int):
        raise QueryError(f"{name} must be an integer, got {value!r}", hint=hint or f"pass a whole number such as {name}={max(minimum, 1) * 10}", field=name)
    if value < minimum:
        raise QueryError(f"{name} must be at least {minimum}, got {value}", hint=hint or f"pass {name}>={minimum}", field=name)
    if maximum is not None and value > maximum:
        if clamp:
            return maximum, f"{name}={value} is above the maximum; clamped to {maximum:,}."
        raise QueryError(f"{name} must be at most {maximum:,}, got {value:,}", hint=f"pass {name}<={maximum}", field=name)
    return value, None


def check_tokens(value: object) -> int | None:
    """``max_tokens``: ``None`` (no cap) or a positive integer."""
    if value is None:
        return None
    return check_count("max_tokens", value, minimum=1)[0]


def check_pattern(value: object, name: str = "pattern") -> str:
    if not isinstance(value, str):
        raise QueryError(f"{name} must be a string, got {value!r}", hint=f"pass a {name} such as '**/*.py'", field=name)
    if not value.strip():
        raise QueryError(f"{name} is empty", hint=f"pass a non-empty {name}", field=name, value=value)
    return value


def check_bool(name: str, value: object) -> bool:
    if isinstance(value, bool):
        return value
    raise QueryError(f"{name} must be true or false, got {value!r}", field=name)


def check_choice(name: str, value: object, choices: tuple[str, ...]) -> str:
    if value not in choices:
        raise QueryError(f"{name} must be one of {', '.join(choices)}; got {value!r}", field=name)
    return value  # type: ignore[return-value]
