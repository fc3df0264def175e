"""Prices and discounts."""

DISCOUNTS = {"SPRING": 0.1, "VIP": 0.2}


def apply_discount(amount, code):
    if code is None:
        return amount
    rate = DISCOUNTS[code]
    return round(amount * (1 - rate), 2)


def price_with_tax(amount, rate):
    return round(amount * (1 + rate), 2)
