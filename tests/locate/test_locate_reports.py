"""``locate`` on issue reports (issue 31): each kind of evidence puts its file where it belongs and says so.

The repository is ``fixtures_repo/shop`` (a Python package, a JS page, Java,
Go, Rust and a C++ header with its source elsewhere); the reports are
``fixtures_repo/reports/*.md``. Each test fails without the evidence kind it
names: the file would rank lower, or its ``why`` would not say it.
"""

from __future__ import annotations

import pytest
from conftest import FIXTURES

from jitctx.session.workspace import Workspace

REPORTS = FIXTURES / "reports"


@pytest.fixture
def shop(make_repo):
    with Workspace(make_repo("shop").root) as ws:
        yield ws


def _locate(ws, report: str, limit: int = 5):
    res = ws.locate((REPORTS / report).read_text(), limit=limit)
    return res, [f.path for f in res.results]


def test_issue_31_python_traceback_frames_map_through_site_packages(shop):
    res, paths = _locate(shop, "python-traceback.md")
    # the frames name site-packages/shop/*.py: the project's own src/shop/*.py; the environment dump's,
    # the pip freeze's and the log's words (platform, version, installed, numpy) do not take the lead
    assert set(paths[:2]) == {"src/shop/pricing.py", "src/shop/cart.py"}
    pricing = next(f for f in res.results if f.path == "src/shop/pricing.py")
    assert pricing.why[0] == "frame: pricing.py:9 in apply_discount"
    assert pricing.regions[0].symbol == "apply_discount" and pricing.regions[0].why[0].startswith("frame:")
    assert any(n.startswith("read as boilerplate") for n in res.extra["notes"])


@pytest.mark.parametrize(
    ("report", "path", "why", "symbol"),
    [
        ("javascript-trace.md", "web/checkout.js", "frame: checkout.js:4 in readQuantity", "readQuantity"),
        ("java-trace.md", "java/src/main/java/com/shop/Invoice.java", "frame: Invoice.java:13 in lineAt", "Invoice.lineAt"),
        ("go-trace.md", "go/ledger/ledger.go", "frame: ledger.go:8 in Last", "Ledger.Last"),
        ("rust-panic.md", "rust/src/stock.rs", "frame: stock.rs:8", "Stock.take"),
    ],
)
def test_issue_31_frames_of_other_languages(shop, report, path, why, symbol):
    res, paths = _locate(shop, report)
    assert paths[0] == path
    top = res.results[0]
    assert top.why[0] == why and top.regions[0].symbol == symbol


def test_issue_31_quoted_message_found_as_a_literal(shop):
    res, paths = _locate(shop, "python-message.md")
    cart = next(f for f in res.results if f.path == "src/shop/cart.py")
    assert 'message: "quantity must be positive, got"' in cart.why
    assert cart.regions[0].symbol == "Cart.add_item" and cart.regions[0].why[0].startswith("message:")


@pytest.mark.parametrize(("report", "path", "why"), [("option.md", "src/shop/cli.py", "option: --max-items"), ("config-key.md", "src/shop/config.py", "option: tax_rate")])
def test_issue_31_options_and_config_keys_found_where_defined(shop, report, path, why):
    res, paths = _locate(shop, report)
    assert paths[0] == path and res.results[0].why[0] == why


def test_issue_31_a_path_or_module_the_report_names(shop):
    res = shop.locate("Importing shop.pricing fails on Python 3.12", limit=5)
    top = res.results[0]
    assert top.path == "src/shop/pricing.py" and "named: shop/pricing" in top.why


def test_issue_31_an_implementation_beside_its_header_is_pulled_along(shop):
    res, paths = _locate(shop, "header.md")
    assert paths[:2] == ["include/shop/tax.h", "native/tax.cpp"]  # src/shop/rounding.py holds more of the words
    assert "beside tax.h" in res.results[1].why
