// Checks of `body particles` settings (a fixed body of particle blocks for
// grid physics such as MLS-MPM, docs/language.md "Particle bodies"), and the
// CellBodySpec they give.
#include "sema/Checker.h"
#include "sema/Limits.h"

#include <cmath>

namespace evoc::sema {

using namespace ast;

namespace {

/// `blocks = [(x, y, w, h, actuator), ...]` (3D: x, y, z, w, h, d, actuator).
void checkBlocks(Checker &C, const Expr &e, body::CellBodySpec &spec) {
  const int dim = spec.dim;
  const std::string shape = dim == 2 ? "(x, y, w, h, actuator)" : "(x, y, z, w, h, d, actuator)";
  auto *list = dynCast<ListExpr>(&e);
  if (!list || list->elems.empty()) {
    C.diags.error(e.range, "'blocks' is a list of particle blocks, " + shape +
                               " each (actuator -1: passive), at least one");
    return;
  }
  int64_t total = 0;
  for (const auto &item : list->elems) {
    auto *t = dynCast<TupleExpr>(item.get());
    if (!t || int(t->elems.size()) != 2 * dim + 1) {
      C.diags.error(item->range, "a particle block is " + shape);
      continue;
    }
    std::vector<double> v;
    for (const auto &x : t->elems)
      if (auto n = C.evalNumber(*x, "a particle block"))
        v.push_back(*n);
    if (v.size() != t->elems.size())
      continue;
    body::ParticleBlock b;
    b.lo.assign(v.begin(), v.begin() + dim);
    b.size.assign(v.begin() + dim, v.begin() + 2 * dim);
    const double a = v.back();
    if (a != std::floor(a) || a < -1 || a > 1e6) {
      C.diags.error(t->elems.back()->range, "a block's actuator is -1 (passive) or a whole "
                                            "number from 0 to 1000000");
      continue;
    }
    b.actuator = int(a);
    bool ok = true;
    int64_t count = 1;
    for (int k = 0; k < dim; ++k) {
      const double w = b.size[size_t(k)];
      if (!(std::abs(b.lo[size_t(k)]) <= 1e4) || !(w > 0 && w <= 1e4)) {
        C.diags.error(item->range, "a block lies within 1e4 of the origin and has a positive "
                                   "size");
        ok = false;
        break;
      }
      const int64_t n = spec.particlesAlong(w);
      if (n < 1) {
        C.diags.error(t->elems[size_t(dim + k)]->range,
                      spec.particleSpacing > 0
                          ? "this block is narrower than the particles' spacing, so it gets no "
                            "particles; make it at least that wide"
                          : "this block is narrower than the grid's spacing (world.grid.dx), so "
                            "it gets no particles; make it at least that wide");
        ok = false;
        break;
      }
      if (spec.particleSpacing > 0 &&
          std::abs(w / spec.particleSpacing - double(n)) > 1e-6 * double(n)) {
        C.diags.error(t->elems[size_t(dim + k)]->range,
                      "this block's size is not a whole number of particle spacings (" +
                          std::to_string(w / spec.particleSpacing) +
                          "); make it a multiple of 'spacing'");
        ok = false;
        break;
      }
      count = count > kMaxParticles / n ? kMaxParticles + 1 : count * n;
    }
    if (!ok)
      continue;
    total += count;
    if (total > kMaxParticles) {
      C.diags.error(item->range, "the body has more than " + std::to_string(kMaxParticles) +
                                     " particles, above the limit; use fewer or smaller blocks");
      return;
    }
    spec.blocks.push_back(std::move(b));
  }
}

} // namespace

void Checker::checkParticleBody(const BodyDecl &bd, Body &body, bool chosen) {
  checkKnownKeys(bd.body, "body particles", {"blocks", "origin", "density", "spacing"});
  body::CellBodySpec spec;
  spec.name = bd.name.name;
  spec.particles = true;
  spec.dim = dimKnown ? out.world.dim : 2;
  spec.origin.assign(size_t(spec.dim), 0.0);
  spec.origin.back() = out.world.ground.height;
  spec.spacing = out.world.gridDx;
  const Setting *blocks = nullptr, *density = nullptr, *spacing = nullptr;
  for (const auto &s : bd.body.settings) {
    const std::string &k = s.key.name;
    Expr *e = (k == "blocks" || k == "origin" || k == "density" || k == "spacing") ? single(s, k)
                                                                                   : nullptr;
    if (!e)
      continue;
    if (k == "spacing") {
      spacing = &s;
      if (auto v = evalNumber(*e, k)) {
        if (!(*v >= 1e-6 && *v <= 1e3))
          diags.error(e->range, "'spacing' (the distance between neighbouring particles) is "
                                "from 1e-6 to 1000");
        else
          spec.particleSpacing = *v;
      }
    } else if (k == "density") {
      density = &s;
      if (auto v = evalInt(*e, k)) {
        if (*v < 1 || *v > kMaxParticleDensity)
          diags.error(e->range, "'density' (particles per grid spacing along each axis) is 1 "
                                "to " +
                                    std::to_string(kMaxParticleDensity));
        else
          spec.density = int(*v);
      }
    } else if (k == "origin") {
      checkBodyOrigin(*e, spec, "where the blocks' (0, 0) lies");
    } else {
      blocks = &s;
    }
  }
  if (spacing && density)
    diags.error(density->key.range, "'density' (per grid spacing) and 'spacing' (the particles' "
                                    "own) both set the particles' spacing; keep one");
  if (!spacing && out.world.gridNodes.empty())
    diags.error(bd.name.range, "a particle body is laid out on the world's grid, and this world "
                               "has none: add world { grid = grid(nodes = (128, 128), dx = 1 / "
                               "128); }, or give the particles' own 'spacing' (docs/language.md, "
                               "\"Grids and particles\")");
  // After density and spacing: the block sizes give the particle counts.
  if (blocks && (spec.spacing > 0 || spec.particleSpacing > 0))
    checkBlocks(*this, *blocks->values.front(), spec);
  if (!blocks)
    diags.error(bd.name.range,
                std::string("a particle body needs 'blocks = [") +
                    (spec.dim == 3 ? "(x, y, z, w, h, d, actuator)" : "(x, y, w, h, actuator)") +
                    ", ...];' (at least one block)");
  if (chosen)
    out.cellBody = std::move(spec);
}

} // namespace evoc::sema
