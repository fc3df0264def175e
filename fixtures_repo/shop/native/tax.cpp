#include "shop/tax.h"

#include <cmath>

namespace shop {
double rounded_tax(double amount, double rate, TaxRounding how) {
    double t = amount * rate;
    return how == TaxRounding::PerLine ? std::nearbyint(t * 100) / 100 : t;
}
}
