// Lowering of the world's solid surfaces: the ground_* built-ins over flat
// ground or a terrain, and the contact built-ins (in_contact, contact_normal,
// contact_gap, contact_speed, push_out) over the ground and the scene's boxes
// (docs/language.md, "The world" and "Scenes").
#include "irgen/Lowerer.h"

namespace evoc::irgen {

using ir::Op;
using ir::ValueId;

// The ground under a horizontal position. Flat ground lowers to the plain
// expressions (height g, normal (0, 1), gap p.y - g, speed v.y), so flat
// physics compiles to the kernels it had before terrain existed. A terrain
// profile selects the segment under the position (flat beyond its ends)
// with a chain of comparisons: its start (x_i, y_i) and slope s_i; then
// height y_i + s_i (x - x_i), normal (-s_i, 1) / sqrt(1 + s_i^2).
Val Lowerer::ground(ast::Builtin id, const Val &a0, const Val &horizontal) {
  using BI = ast::Builtin;
  const auto &g = prog_.world.ground;
  if (prog_.world.dim == 3)
    return ground3(id, a0, horizontal);
  const ValueId at = horizontal.at(0);
  if (g.profile.empty()) {
    switch (id) {
    case BI::GroundHeight:
      return {b_.constF(g.height)};
    case BI::GroundNormal:
      return {b_.constF(0), b_.constF(1)};
    case BI::GroundGap:
      return {b_.sub(a0.at(1), b_.constF(g.height))};
    default:
      return {a0.at(1)};
    }
  }
  const auto &P = g.profile;
  ValueId x0 = b_.constF(P[0].first), y0 = b_.constF(P[0].second), s = b_.constF(0);
  for (size_t i = 0; i < P.size(); ++i) {
    const bool last = i + 1 == P.size();
    double slope = last ? 0 : (P[i + 1].second - P[i].second) / (P[i + 1].first - P[i].first);
    ValueId on = b_.op(Op::Ge, {at, b_.constF(P[i].first)});
    x0 = b_.op(Op::Select, {on, b_.constF(P[i].first), x0});
    y0 = b_.op(Op::Select, {on, b_.constF(P[i].second), y0});
    s = b_.op(Op::Select, {on, b_.constF(slope), s});
  }
  ValueId inv = b_.div(b_.constF(1), b_.op(Op::Sqrt, {b_.add(b_.constF(1), b_.mul(s, s))}));
  auto height = [&](ValueId x) { return b_.add(y0, b_.mul(s, b_.sub(x, x0))); };
  switch (id) {
  case BI::GroundHeight:
    return {height(at)};
  case BI::GroundNormal:
    return {b_.op(Op::Neg, {b_.mul(s, inv)}), inv};
  case BI::GroundGap:
    return {b_.mul(b_.sub(a0.at(1), height(a0.at(0))), inv)};
  default:
    return {b_.mul(b_.sub(a0.at(1), b_.mul(s, a0.at(0))), inv)};
  }
}

// In 3D the horizontal position is (x, y). Flat ground lowers to height g,
// normal (0, 0, 1), gap p.z - g and speed v.z. A height field selects, by
// comparisons on x, each grid row's height and x-slope in the cell under x,
// then, by comparisons on y, the two rows around y: height h, slopes hx, hy
// (0 across the edges, where the field is continued flat), normal
// (-hx, -hy, 1) / sqrt(1 + hx^2 + hy^2), and gap and speed measured along it
// from the tangent plane at (x, y).
Val Lowerer::ground3(ast::Builtin id, const Val &a0, const Val &at) {
  using BI = ast::Builtin;
  const auto &g = prog_.world.ground;
  if (g.field.empty()) {
    switch (id) {
    case BI::GroundHeight:
      return {b_.constF(g.height)};
    case BI::GroundNormal:
      return {b_.constF(0), b_.constF(0), b_.constF(1)};
    case BI::GroundGap:
      return {b_.sub(a0.at(2), b_.constF(g.height))};
    default:
      return {a0.at(2)};
    }
  }
  const HeightField &F = g.field;
  const size_t nx = F.nx(), ny = F.ny();
  auto select = [&](ValueId on, double v, ValueId old) {
    return b_.op(Op::Select, {on, b_.constF(v), old});
  };
  // Along x: the cell start and, per row j, the height there and the slope.
  ValueId xi = b_.constF(F.xs[0]);
  std::vector<ValueId> row(ny), slope(ny);
  for (size_t j = 0; j < ny; ++j) {
    row[j] = b_.constF(F.at(0, j));
    slope[j] = b_.constF(0);
  }
  for (size_t i = 0; i < nx; ++i) {
    ValueId on = b_.op(Op::Ge, {at.at(0), b_.constF(F.xs[i])});
    xi = select(on, F.xs[i], xi);
    for (size_t j = 0; j < ny; ++j) {
      double s = i + 1 == nx ? 0 : (F.at(i + 1, j) - F.at(i, j)) / (F.xs[i + 1] - F.xs[i]);
      row[j] = select(on, F.at(i, j), row[j]);
      slope[j] = select(on, s, slope[j]);
    }
  }
  ValueId dx = b_.sub(at.at(0), xi);
  for (size_t j = 0; j < ny; ++j)
    row[j] = b_.add(row[j], b_.mul(slope[j], dx));
  // Along y: the rows below and above y, and 1 / the cell's height in y.
  ValueId yj = b_.constF(F.ys[0]), w = b_.constF(0);
  ValueId rA = row[0], rB = row[0], sA = slope[0], sB = slope[0];
  for (size_t j = 0; j < ny; ++j) {
    ValueId on = b_.op(Op::Ge, {at.at(1), b_.constF(F.ys[j])});
    const size_t up = j + 1 == ny ? j : j + 1;
    yj = select(on, F.ys[j], yj);
    w = select(on, up == j ? 0 : 1 / (F.ys[up] - F.ys[j]), w);
    rA = b_.op(Op::Select, {on, row[j], rA});
    rB = b_.op(Op::Select, {on, row[up], rB});
    sA = b_.op(Op::Select, {on, slope[j], sA});
    sB = b_.op(Op::Select, {on, slope[up], sB});
  }
  ValueId t = b_.mul(b_.sub(at.at(1), yj), w);
  ValueId h = b_.add(rA, b_.mul(t, b_.sub(rB, rA)));
  ValueId hx = b_.add(sA, b_.mul(t, b_.sub(sB, sA)));
  ValueId hy = b_.mul(b_.sub(rB, rA), w);
  ValueId inv =
      b_.div(b_.constF(1),
             b_.op(Op::Sqrt, {b_.add(b_.constF(1), b_.add(b_.mul(hx, hx), b_.mul(hy, hy)))}));
  // The tangent plane's height at (px, py), and a vector's normal component.
  auto along = [&](ValueId vx, ValueId vy) { return b_.add(b_.mul(hx, vx), b_.mul(hy, vy)); };
  switch (id) {
  case BI::GroundHeight:
    return {h};
  case BI::GroundNormal:
    return {b_.op(Op::Neg, {b_.mul(hx, inv)}), b_.op(Op::Neg, {b_.mul(hy, inv)}), inv};
  case BI::GroundGap: {
    ValueId plane = b_.add(h, along(b_.sub(a0.at(0), at.at(0)), b_.sub(a0.at(1), at.at(1))));
    return {b_.mul(b_.sub(a0.at(2), plane), inv)};
  }
  default:
    return {b_.mul(b_.sub(a0.at(2), along(a0.at(0), a0.at(1))), inv)};
  }
}

// The box face chosen at a position x (docs/language.md, "Scenes"): among
// the contact faces of the boxes holding x strictly inside, the one whose
// plane x lies least deep behind (the largest signed distance; ties to the
// earlier box, then the earlier face: x0, x1, y0, y1, z0, z1). Lowered as a
// chain of comparisons and selects per box and face. Returns {any, c, n...}:
// whether x is inside a box at all, and the face's plane n . p = c with its
// outward unit normal n.
Val Lowerer::sceneFace(const Val &x) {
  std::vector<uint64_t> key = {3};
  contextKey(key);
  for (ValueId v : x)
    key.push_back(vn_.number(v));
  if (const Val *v = recall(key))
    return *v;
  const int dim = prog_.world.dim;
  ValueId any = b_.constB(false), best = b_.constF(0), c = b_.constF(0);
  Val n(size_t(dim), b_.constF(0));
  for (const SceneBox &box : prog_.world.ground.scene) {
    ValueId inside = 0;
    ValueId bd = 0, bc = 0;
    Val bn(static_cast<size_t>(dim), 0);
    bool first = true;
    for (int k = 0; k < dim; ++k) {
      const double lo = box.lo[size_t(k)], hi = box.hi[size_t(k)];
      ValueId in = b_.op(Op::And, {b_.op(Op::Gt, {x[size_t(k)], b_.constF(lo)}),
                                   b_.op(Op::Lt, {x[size_t(k)], b_.constF(hi)})});
      inside = k == 0 ? in : b_.op(Op::And, {inside, in});
      for (int side = 0; side < 2; ++side) {
        if (side == 0 && k == dim - 1 && !box.floating)
          continue; // resting on the ground: no bottom face
        ValueId d =
            side == 0 ? b_.sub(b_.constF(lo), x[size_t(k)]) : b_.sub(x[size_t(k)], b_.constF(hi));
        const double plane = side == 0 ? -lo : hi;
        const double out = side == 0 ? -1 : 1;
        ValueId better = first ? 0 : b_.op(Op::Gt, {d, bd});
        auto pick = [&](ValueId v, ValueId old) {
          return first ? v : b_.op(Op::Select, {better, v, old});
        };
        bd = pick(d, bd);
        bc = pick(b_.constF(plane), bc);
        for (int j = 0; j < dim; ++j)
          bn[size_t(j)] = pick(b_.constF(j == k ? out : 0), bn[size_t(j)]);
        first = false;
      }
    }
    ValueId take =
        b_.op(Op::And, {inside, b_.op(Op::Or, {b_.op(Op::Not, {any}), b_.op(Op::Gt, {bd, best})})});
    best = b_.op(Op::Select, {take, bd, best});
    c = b_.op(Op::Select, {take, bc, c});
    for (int j = 0; j < dim; ++j)
      n[size_t(j)] = b_.op(Op::Select, {take, bn[size_t(j)], n[size_t(j)]});
    any = b_.op(Op::Or, {any, inside});
  }
  Val face = {any, c};
  face.insert(face.end(), n.begin(), n.end());
  remember(std::move(key), face);
  return face;
}

// The contact built-ins. Without a scene each is the ground_* expression at
// the position's horizontal coordinates (in_contact(x): x.y < ground_height;
// push_out(q, x): q lifted onto the ground under it), so worlds without
// boxes compile to the kernels they had before scenes existed. With a
// scene, each selects the box face chosen at x (sceneFace) when x is inside
// a box: gap n . p - c, speed n . v, push-out q - min(0, n . q - c) n.
Val Lowerer::contact(const ast::CallExpr *e) {
  using BI = ast::Builtin;
  const size_t dim = size_t(prog_.world.dim);
  Val a0 = expr(e->args.at(0).get());
  const Val x = e->args.size() > 1 ? expr(e->args[1].get()) : a0;
  auto horizontal = [&](const Val &p) { return Val(p.begin(), p.begin() + long(dim - 1)); };
  const bool scene = !prog_.world.ground.scene.empty();
  const Val face = scene ? sceneFace(x) : Val{};
  auto onFace = [&](const Val &boxValue, const Val &groundValue) {
    Val r;
    for (size_t j = 0; j < groundValue.size(); ++j)
      r.push_back(b_.op(Op::Select, {face[0], boxValue[j], groundValue[j]}));
    return r;
  };
  auto dotNormal = [&](const Val &p) { // n . p for the chosen face
    ValueId dot = b_.mul(face[2], p[0]);
    for (size_t j = 1; j < dim; ++j)
      dot = b_.add(dot, b_.mul(face[2 + j], p[j]));
    return dot;
  };
  switch (e->builtin) {
  case BI::InContact: {
    ValueId below = b_.op(Op::Lt, {x[dim - 1], ground(BI::GroundHeight, {}, horizontal(x))[0]});
    return {scene ? b_.op(Op::Or, {below, face[0]}) : below};
  }
  case BI::ContactNormal: {
    Val g = ground(BI::GroundNormal, {}, horizontal(x));
    return scene ? onFace(Val(face.begin() + 2, face.end()), g) : g;
  }
  case BI::ContactGap:
  case BI::ContactSpeed: {
    const bool gap = e->builtin == BI::ContactGap;
    Val g = ground(gap ? BI::GroundGap : BI::GroundSpeed, a0, horizontal(x));
    if (!scene)
      return g;
    ValueId along = dotNormal(a0);
    return onFace({gap ? b_.sub(along, face[1]) : along}, g);
  }
  default: { // PushOut
    Val q = a0;
    if (scene) {
      ValueId behind = b_.op(Op::Min, {b_.constF(0), b_.sub(dotNormal(q), face[1])});
      Val pushed;
      for (size_t j = 0; j < dim; ++j)
        pushed.push_back(b_.sub(q[j], b_.mul(behind, face[2 + j])));
      q = onFace(pushed, q);
    }
    q[dim - 1] = b_.op(Op::Max, {q[dim - 1], ground(BI::GroundHeight, {}, horizontal(q))[0]});
    return q;
  }
  }
}

} // namespace evoc::irgen
