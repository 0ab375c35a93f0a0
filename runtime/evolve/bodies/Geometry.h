// Small 2D/3D geometry for grammar bodies: orthogonal affine maps, the best
// rigid (or reflecting) fit of one point list onto another, and
// penetration tests between convex cells (touching is not penetration).
#pragma once

#include <array>
#include <vector>

namespace evoc::evolve::geom {

/// x' = m x + t in 2 or 3 dimensions; m is row-major dim x dim (the unused
/// entries of a 2D map are zero).
struct Affine {
  int dim = 2;
  std::array<double, 9> m{};
  std::array<double, 3> t{};
  double at(int r, int c) const { return m[r * dim + c]; }
  double &at(int r, int c) { return m[r * dim + c]; }
};

/// The identity map.
Affine identity(int dim);
/// a after b: x -> a(b(x)).
Affine compose(const Affine &a, const Affine &b);
/// The inverse of a map whose linear part is orthogonal.
Affine inverseOrthogonal(const Affine &a);
/// out = a(in); in and out hold a.dim coordinates (may alias).
void apply(const Affine &a, const double *in, double *out);
/// The determinant of the linear part.
double det(const Affine &a);
/// A rotation by `radians` (2D: about the origin; 3D: about the last axis).
Affine rotation(int dim, double radians);
/// A rotation by `radians` about the unit axis `u` (3D).
Affine axisRotation(const double *u, double radians);

/// The map with linear part of determinant `sign` (+1: a rotation, -1: a
/// reflection) and no scaling that best maps src[i] onto dst[i] in the
/// least-squares sense; n >= 1 points of dim coordinates each, packed. 2D:
/// closed form by atan2; 3D: Horn's quaternion method (sign -1 fits the
/// points reflected through the first axis, then composes). `residual`
/// receives the largest distance |fit(src[i]) - dst[i]|. With too few
/// points to fix the rotation, the rotation is the one of least angle.
Affine fit(int dim, const double *src, const double *dst, int n, int sign, double *residual);

/// Eigen decomposition of a symmetric n x n matrix (n <= 4, row-major) by
/// cyclic Jacobi rotations: eigenvalues into `values`, eigenvectors as the
/// columns of `vectors`.
void symmetricEigen(int n, const double *a, double *values, double *vectors);

/// True when two convex polygons (2D, vertices in either winding) share
/// interior area: a separating-axis test over both polygons' edge normals,
/// where projections overlapping by no more than eps count as touching.
bool polygonsPenetrate(const std::vector<std::array<double, 2>> &a,
                       const std::vector<std::array<double, 2>> &b, double eps);

/// True when the convex hulls of two 3D point sets share interior volume:
/// a separating-axis test over every plane through three points of either
/// set that has the whole set on one side (the hull's face planes) and the
/// cross products of all point-pair directions of both sets (a superset of
/// the hull edges, so the test is exact; extra axes only find genuine
/// separations). Overlaps no deeper than eps count as touching.
bool hullsPenetrate(const std::vector<std::array<double, 3>> &a,
                    const std::vector<std::array<double, 3>> &b, double eps);

/// The convex hull of 2D points in counter-clockwise order (monotone chain),
/// as indices into `pts`; collinear points are dropped.
std::vector<int> convexHull2D(const std::vector<std::array<double, 2>> &pts);

} // namespace evoc::evolve::geom
