"""The shop package."""

from .cart import Cart
from .pricing import apply_discount

__all__ = ["Cart", "apply_discount"]
