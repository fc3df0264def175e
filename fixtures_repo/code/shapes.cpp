#include "shapes.hpp"

namespace geo::impl {
void helper() {}
}  // namespace geo::impl

geo::Shape::Shape() : id_(0) {}

geo::Shape::~Shape() {}

// Circles are shapes too.
class Circle : public geo::Shape {
 public:
  explicit Circle(double r) : r_(r) {}
  double area() const override;

 private:
  double r_;
};

double Circle::area() const { return 3.14159 * r_ * r_; }

template <typename T>
T clamp(T v, T lo, T hi) {
  return v < lo ? lo : (v > hi ? hi : v);
}

int Circle::operator+(int x) { return x; }

void geo::impl::helper2() {}

extern "C" {
int c_entry(void) { return 0; }
}

namespace {
int hidden() { return 1; }
}
