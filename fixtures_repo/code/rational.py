"""Rational numbers: a fixture for outlines."""

from typing import overload

# A module constant (not outlined).
LIMIT = 10


# Doc comment for Rational,
# two lines long.
@total_ordering
class Rational:
    """A fraction."""

    class Error(Exception):
        pass

    def __init__(self, num, den=1):
        self.num = num
        self.den = den

    @overload
    def __add__(self, other: int) -> "Rational": ...
    @overload
    def __add__(self, other: "Rational") -> "Rational": ...
    def __add__(self, other):
        def lift(x):
            return x if isinstance(x, Rational) else Rational(x)

        return lift(other)

    @property
    async def value(self):
        return self.num / self.den


if LIMIT:

    def conditional():
        pass


# Not attached: a blank line follows.

def gcd(a, b):
    while b:
        a, b = b, a % b
    return a


async def main():
    class Local:
        def run(self):
            pass

    return Local
