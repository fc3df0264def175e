"""A shopping cart."""

from .pricing import apply_discount


class Cart:
    def __init__(self):
        self.items = {}

    def add_item(self, sku, qty=1):
        if qty <= 0:
            raise ValueError(f"quantity must be positive, got {qty}")
        self.items[sku] = self.items.get(sku, 0) + qty

    def remove_item(self, sku):
        del self.items[sku]

    def total(self, prices, code=None):
        subtotal = sum(prices[sku] * qty for sku, qty in self.items.items())
        return apply_discount(subtotal, code)
