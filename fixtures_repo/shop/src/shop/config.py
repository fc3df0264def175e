"""Settings read from shop.toml."""


def load(settings):
    return {
        "currency": settings.get("currency", "EUR"),
        "tax_rate": float(settings.get("tax_rate", 0.2)),
    }
