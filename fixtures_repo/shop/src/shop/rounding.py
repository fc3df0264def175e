"""Rounding of amounts: half to even per line, or half away from zero per invoice total.

The Python side of TaxRounding: PerLine rounds each line's tax half to even,
PerInvoice rounds the invoice total's tax half away from zero.
"""


def round_half_even(amount):
    """Round half to even, as a line of an invoice does (PerLine)."""
    return round(amount, 2)


def round_half_away_from_zero(amount):
    """Round half away from zero, as the invoice total does: 0.125 -> 0.13 (PerInvoice)."""
    return float(int(amount * 100 + (0.5 if amount >= 0 else -0.5))) / 100
