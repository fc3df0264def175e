//! Shapes: a fixture for outlines.

use std::fmt;

/// A point in the plane.
/// Two coordinates.
#[derive(Debug, Clone)]
pub struct Point {
    x: f64,
    y: f64,
}

pub enum Shape {
    Circle(f64),
    Square(f64),
}

pub trait Area {
    fn area(&self) -> f64;
    fn describe(&self) -> String {
        format!("area {}", self.area())
    }
}

impl Point {
    pub fn new(x: f64, y: f64) -> Self {
        Point { x, y }
    }
}

impl fmt::Display for Point {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "({}, {})", self.x, self.y)
    }
}

impl<T: Area> Area for Vec<T> {
    fn area(&self) -> f64 {
        self.iter().map(|s| s.area()).sum()
    }
}

type Pair = (Point, Point);

macro_rules! square {
    ($x:expr) => {
        $x * $x
    };
}

pub mod geometry {
    pub union Bits {
        i: u64,
        f: f64,
    }

    pub fn origin() -> super::Point {
        fn zero() -> f64 {
            0.0
        }
        super::Point::new(zero(), zero())
    }
}

mod external;

#[cfg(test)]
mod tests {
    #[test]
    fn it_works() {}
}
