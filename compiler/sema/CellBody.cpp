// Checks of `body cells` settings (a fixed body of square cells in 2D or
// cube cells in 3D, docs/language.md "Fixed bodies"), and the CellBodySpec
// they give.
#include "sema/Checker.h"
#include "sema/Limits.h"

#include <array>
#include <cmath>
#include <cstdio>
#include <set>

namespace evoc::sema {

using namespace ast;

namespace {

std::string q(const std::string &s) { return "'" + s + "'"; }

struct TemplateName {
  const char *name;
  body::CellTemplate value;
  bool cubeOnly;
};
constexpr TemplateName kTemplates[] = {{"vertical", body::CellTemplate::Vertical, false},
                                       {"horizontal", body::CellTemplate::Horizontal, false},
                                       {"diagonal", body::CellTemplate::Diagonal, false},
                                       {"all", body::CellTemplate::All, false},
                                       {"none", body::CellTemplate::None, false},
                                       {"leg", body::CellTemplate::Leg, true},
                                       {"along_x", body::CellTemplate::AlongX, true},
                                       {"along_y", body::CellTemplate::AlongY, true}};

std::string templateList(int dim) {
  return dim == 2 ? "vertical, horizontal, diagonal, all or none"
                  : "vertical, horizontal, diagonal, all, none, leg, along_x or along_y";
}

std::string fmtNum(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.15g", v);
  return buf;
}

/// `cell = square;` (2D) or `cell = cube;` (3D): the world's kind of cell.
void checkCellKind(Checker &C, const Expr &e, int dim) {
  auto n = C.evalName(e, "cell");
  const char *mine = dim == 2 ? "square" : "cube";
  if (!n)
    return; // evalName reported it
  if ((*n == "cube" || *n == "square") && *n != mine) {
    C.diags.error(e.range, q(*n) + " cells are " + (*n == "cube" ? "3D" : "2D") +
                               ", but world.dim is " + std::to_string(dim) + "; a " +
                               std::to_string(dim) + "D body is made of '" + mine + "' cells");
  } else if (*n != mine) {
    std::string c = closest(*n, {"square", "cube"});
    C.diags.error(e.range, "unknown cell " + q(*n) +
                               (c.empty() ? "; cells are 'square' (2D) and 'cube' (3D)"
                                          : "; did you mean '" + c + "'?"));
  }
}

/// A cell's grid index: a whole number within kMaxCellIndex.
std::optional<int> cellIndex(Checker &C, const Expr &x) {
  auto v = C.evalNumber(x, "cells");
  if (!v)
    return std::nullopt;
  if (std::floor(*v) != *v || std::fabs(*v) > double(kMaxCellIndex)) {
    C.diags.error(x.range, "a cell's grid index is a whole number from -" +
                               std::to_string(kMaxCellIndex) + " to " +
                               std::to_string(kMaxCellIndex) + ", not " + fmtNum(*v));
    return std::nullopt;
  }
  return int(*v);
}

} // namespace

std::optional<body::CellTemplate> cellTemplate(Checker &C, const Expr &te, int dim) {
  const bool cube = dim == 3;
  std::optional<body::CellTemplate> tpl;
  auto *tn = dynCast<NameExpr>(&te);
  if (!tn) {
    C.diags.error(te.range, "a cell's actuation template is a name: " + templateList(dim));
    return tpl;
  }
  std::vector<std::string> names;
  bool cubeOnly = false;
  for (const auto &x : kTemplates) {
    if (tn->name == x.name) {
      if (x.cubeOnly && !cube)
        cubeOnly = true;
      else
        tpl = x.value;
    }
    if (cube || !x.cubeOnly)
      names.push_back(x.name);
  }
  if (cubeOnly) {
    C.diags.error(te.range, "the template " + q(tn->name) +
                                " is for cube cells (3D); a square cell's template is " +
                                templateList(2));
  } else if (!tpl) {
    std::string c = closest(tn->name, names);
    C.diags.error(te.range, "unknown actuation template " + q(tn->name) +
                                (c.empty() ? "; expected " + templateList(dim)
                                           : "; did you mean '" + c + "'?"));
  }
  return tpl;
}

namespace {

/// `cells = [(i, j, template), ...];` (3D: (i, j, k, template)): each
/// position once, into spec.cells.
void checkCellList(Checker &C, const Expr &e, body::CellBodySpec &spec) {
  const bool cube = spec.dim == 3;
  const std::string form = cube ? "(i, j, k, template)" : "(i, j, template)";
  const std::string example = cube ? "(0, 0, 0, leg)" : "(0, 0, vertical)";
  auto *list = dynCast<ListExpr>(&e);
  if (!list) {
    C.diags.error(e.range, "'cells' is a list of " + form + ": [" + example + ", " +
                               (cube ? "(1, 0, 0, none)" : "(1, 0, none)") + ", ...]");
    return;
  }
  if (list->elems.empty()) {
    C.diags.error(e.range, "a cells body needs at least one cell");
    return;
  }
  if (list->elems.size() > kMaxBodyCells) {
    C.diags.error(e.range, "a cells body of " + std::to_string(list->elems.size()) +
                               " cells is above the limit of " + std::to_string(kMaxBodyCells));
    return;
  }
  const size_t arity = cube ? 4 : 3;
  std::map<std::array<int, 3>, SourceRange> seen;
  for (auto &ce : list->elems) {
    auto *t = dynCast<TupleExpr>(ce.get());
    if (!t || t->elems.size() != arity) {
      C.diags.error(ce->range, "a cell is " + form + ", e.g. " + example);
      continue;
    }
    std::optional<int> idx[3];
    bool indexOk = true;
    for (size_t a = 0; a + 1 < arity; ++a) {
      idx[a] = cellIndex(C, *t->elems[a]);
      indexOk = indexOk && idx[a].has_value();
    }
    if (!cube)
      idx[2] = 0;
    std::optional<body::CellTemplate> tpl = cellTemplate(C, *t->elems[arity - 1], spec.dim);
    // A repeated position is reported even when the cell has other errors.
    if (indexOk) {
      std::array<int, 3> key{*idx[0], *idx[1], *idx[2]};
      auto [it, fresh] = seen.emplace(key, ce->range);
      if (!fresh) {
        std::string at = std::to_string(key[0]) + ", " + std::to_string(key[1]) +
                         (cube ? ", " + std::to_string(key[2]) : "");
        C.diags.error(ce->range, "cell (" + at + ") is given twice")
            .note(it->second, "the first one is here");
        continue;
      }
    }
    if (!indexOk || !tpl)
      continue;
    body::CellSpec cs;
    cs.i = *idx[0];
    cs.j = *idx[1];
    cs.k = *idx[2];
    cs.actuated = *tpl;
    spec.cells.push_back(cs);
  }
}

} // namespace

void Checker::checkCellBody(const BodyDecl &bd, Body &body, bool chosen) {
  checkKnownKeys(bd.body, "body cells",
                 {"cell", "edge", "origin", "stiffness", "actuation", "cells"});
  body::CellBodySpec spec;
  spec.name = bd.name.name;
  spec.dim = dimKnown ? out.world.dim : 2;
  // Default: grid corner (0, 0) on the ground.
  spec.origin.assign(size_t(spec.dim), 0.0);
  spec.origin.back() = out.world.ground.height;
  // Until set: the defaults every body kind shares.
  spec.edge = body.edge;
  spec.stiffness = body.stiffness;
  spec.actuation = body.actuation;
  for (const auto &s : bd.body.settings) {
    const std::string &k = s.key.name;
    if (k != "cell" && k != "edge" && k != "origin" && k != "stiffness" && k != "actuation" &&
        k != "cells")
      continue;
    Expr *e = single(s, k);
    if (!e)
      continue;
    if (k == "cell") {
      checkCellKind(*this, *e, spec.dim);
    } else if (k == "edge" || k == "stiffness") {
      if (auto v = evalNumber(*e, k)) {
        if (!(*v > 0))
          diags.error(e->range, q(k) + " must be positive");
        else
          (k == "edge" ? spec.edge : spec.stiffness) = *v;
      }
    } else if (k == "actuation") {
      if (auto v = evalNumber(*e, k)) {
        if (*v < 0)
          diags.error(e->range, "'actuation' must not be negative");
        else
          spec.actuation = *v;
      }
    } else if (k == "origin") {
      checkBodyOrigin(*e, spec, "the position of grid corner (0, 0)");
    } else if (k == "cells") {
      checkCellList(*this, *e, spec);
    }
  }
  if (!bd.body.find("cells"))
    diags.error(bd.name.range, std::string("a cells body needs 'cells = [") +
                                   (spec.dim == 3 ? "(i, j, k, template)" : "(i, j, template)") +
                                   ", ...];' (at least one cell)");
  body.edge = spec.edge;
  body.stiffness = spec.stiffness;
  body.actuation = spec.actuation;
  if (chosen)
    out.cellBody = std::move(spec);
}

void Checker::checkBodyOrigin(const Expr &e, body::CellBodySpec &spec, const std::string &meaning) {
  auto *t = dynCast<TupleExpr>(&e);
  if (!t || int(t->elems.size()) != spec.dim) {
    diags.error(e.range, "'origin' is " + meaning + ": " + std::to_string(spec.dim) +
                             " numbers, e.g. " +
                             (spec.dim == 2 ? "(0.5, 0.1)" : "(0.5, 0.5, 0.1)"));
    return;
  }
  std::vector<double> o;
  for (auto &c : t->elems)
    if (auto v = evalNumber(*c, "origin"))
      o.push_back(*v);
  if (o.size() == t->elems.size())
    spec.origin = o;
}

int cellBodyPoints(const body::CellBodySpec &spec) {
  if (spec.particles) {
    int64_t n = 0;
    for (const auto &b : spec.blocks) {
      int64_t c = 1;
      for (double w : b.size)
        c *= spec.particlesAlong(w);
      n += c;
    }
    return int(n);
  }
  std::set<std::array<int, 3>> corners;
  const int dk = spec.dim == 3 ? 2 : 1;
  for (const auto &c : spec.cells)
    for (int di = 0; di < 2; ++di)
      for (int dj = 0; dj < 2; ++dj)
        for (int d = 0; d < dk; ++d)
          corners.insert({c.i + di, c.j + dj, c.k + d});
  return int(corners.size());
}

} // namespace evoc::sema
