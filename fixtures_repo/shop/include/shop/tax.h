#pragma once

// Tax rounding for invoices: round half to even, per line or per invoice total.
namespace shop {
enum class TaxRounding { PerLine, PerInvoice };
double rounded_tax(double amount, double rate, TaxRounding rounding);
}
