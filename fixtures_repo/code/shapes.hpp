#pragma once
#include <vector>

namespace geo {

/// A shape with an area.
class Shape {
 public:
  Shape();
  virtual ~Shape();
  virtual double area() const = 0;
  int id() const { return id_; }

 private:
  struct Cache {
    double value;
  };
  int id_;
};

template <typename T>
struct Point {
  T x, y;
  T dot(const Point &o) const { return x * o.x + y * o.y; }
};

namespace detail {
enum class Kind { Circle, Square };
using Id = int;
}  // namespace detail

}  // namespace geo
