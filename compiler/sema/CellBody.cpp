// Checks of `body cells` settings (a fixed body of square cells,
// docs/language.md "Fixed bodies"), and the CellBodySpec they give.
#include "sema/Checker.h"

#include <cmath>
#include <cstdio>
#include <set>

namespace evoc::sema {

using namespace ast;

namespace {

std::string q(const std::string &s) { return "'" + s + "'"; }

/// The most cells a fixed body may have (far more than a hand design needs;
/// a body is built and checked before anything is allocated for it), and
/// the largest grid index, so that corner indices (i + 1, j + 1) never
/// overflow.
constexpr size_t kMaxCells = 100000;
constexpr int64_t kMaxCellIndex = 1000000;

struct TemplateName {
  const char *name;
  body::CellTemplate value;
};
constexpr TemplateName kTemplates[] = {{"vertical", body::CellTemplate::Vertical},
                                       {"horizontal", body::CellTemplate::Horizontal},
                                       {"diagonal", body::CellTemplate::Diagonal},
                                       {"all", body::CellTemplate::All},
                                       {"none", body::CellTemplate::None}};

constexpr const char *kTemplateList = "vertical, horizontal, diagonal, all or none";

std::string fmtNum(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.15g", v);
  return buf;
}

} // namespace

void Checker::checkCellBody(const BodyDecl &bd, Body &body, bool chosen) {
  checkKnownKeys(bd.body, "body cells",
                 {"cell", "edge", "origin", "stiffness", "actuation", "cells"});
  body::CellBodySpec spec;
  spec.name = bd.name.name;
  spec.dim = haveWorld ? out.world.dim : 2;
  // Default: grid corner (0, 0) on the ground.
  spec.origin.assign(size_t(spec.dim), 0.0);
  spec.origin.back() = out.world.ground.height;
  // Until set: the defaults every body kind shares.
  spec.edge = body.edge;
  spec.stiffness = body.stiffness;
  spec.actuation = body.actuation;
  bool cellOk = true;
  SourceRange cellAt = bd.name.range;
  for (const auto &s : bd.body.settings) {
    const std::string &k = s.key.name;
    if (k != "cell" && k != "edge" && k != "origin" && k != "stiffness" && k != "actuation" &&
        k != "cells")
      continue;
    Expr *e = single(s, k);
    if (!e)
      continue;
    if (k == "cell") {
      cellAt = e->range;
      auto n = evalName(*e, k);
      if (!n) {
        cellOk = false;
      } else if (*n == "cube") {
        diags.error(e->range, "cube cells (3D bodies) are not supported yet; the only cell is "
                              "'square' (2D)");
        cellOk = false;
      } else if (*n != "square") {
        std::string c = closest(*n, {"square", "cube"});
        diags.error(e->range, "unknown cell " + q(*n) +
                                  (c.empty() ? "; the only cell is 'square'"
                                             : "; did you mean '" + c + "'?"));
        cellOk = false;
      }
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
      auto *t = dynCast<TupleExpr>(e);
      if (!t || int(t->elems.size()) != spec.dim) {
        diags.error(e->range,
                    "'origin' is the position of grid corner (0, 0): " + std::to_string(spec.dim) +
                        " numbers, e.g. " + (spec.dim == 2 ? "(0.5, 0.1)" : "(0.5, 0.5, 0.1)"));
        continue;
      }
      std::vector<double> o;
      for (auto &c : t->elems)
        if (auto v = evalNumber(*c, "origin"))
          o.push_back(*v);
      if (o.size() == t->elems.size())
        spec.origin = o;
    } else if (k == "cells") {
      auto *list = dynCast<ListExpr>(e);
      if (!list) {
        diags.error(e->range, "'cells' is a list of (i, j, template): [(0, 0, vertical), "
                              "(1, 0, none), ...]");
        continue;
      }
      if (list->elems.empty()) {
        diags.error(e->range, "a cells body needs at least one cell");
        continue;
      }
      if (list->elems.size() > kMaxCells) {
        diags.error(e->range, "a cells body of " + std::to_string(list->elems.size()) +
                                  " cells is above the limit of " + std::to_string(kMaxCells));
        continue;
      }
      std::map<std::pair<int, int>, SourceRange> seen;
      for (auto &ce : list->elems) {
        auto *t = dynCast<TupleExpr>(ce.get());
        if (!t || t->elems.size() != 3) {
          diags.error(ce->range, "a cell is (i, j, template), e.g. (0, 0, vertical)");
          continue;
        }
        auto index = [&](const Expr &x) -> std::optional<int> {
          auto v = evalNumber(x, "cells");
          if (!v)
            return std::nullopt;
          if (std::floor(*v) != *v || std::fabs(*v) > double(kMaxCellIndex)) {
            diags.error(x.range, "a cell's grid index is a whole number from -" +
                                     std::to_string(kMaxCellIndex) + " to " +
                                     std::to_string(kMaxCellIndex) + ", not " + fmtNum(*v));
            return std::nullopt;
          }
          return int(*v);
        };
        auto i = index(*t->elems[0]);
        auto j = index(*t->elems[1]);
        std::optional<body::CellTemplate> tpl;
        const Expr &te = *t->elems[2];
        if (auto *tn = dynCast<NameExpr>(&te)) {
          std::vector<std::string> names;
          for (const auto &x : kTemplates) {
            names.push_back(x.name);
            if (tn->name == x.name)
              tpl = x.value;
          }
          if (!tpl) {
            std::string c = closest(tn->name, names);
            diags.error(te.range, "unknown actuation template " + q(tn->name) +
                                      (c.empty() ? "; expected " + std::string(kTemplateList)
                                                 : "; did you mean '" + c + "'?"));
          }
        } else {
          diags.error(te.range,
                      "a cell's actuation template is a name: " + std::string(kTemplateList));
        }
        // A repeated position is reported even when the cell has other errors.
        if (i && j) {
          auto [it, fresh] = seen.emplace(std::make_pair(*i, *j), ce->range);
          if (!fresh) {
            diags
                .error(ce->range, "cell (" + std::to_string(*i) + ", " + std::to_string(*j) +
                                      ") is given twice")
                .note(it->second, "the first one is here");
            continue;
          }
        }
        if (!i || !j || !tpl)
          continue;
        spec.cells.push_back({*i, *j, *tpl});
      }
    }
  }
  if (spec.dim == 3 && cellOk)
    diags.error(cellAt, "body " + q(spec.name) +
                            " is made of square cells, which are 2D, but world.dim is 3; cube "
                            "cells for 3D bodies are not supported yet");
  if (!bd.body.find("cells"))
    diags.error(bd.name.range,
                "a cells body needs 'cells = [(i, j, template), ...];' (at least one cell)");
  body.edge = spec.edge;
  body.stiffness = spec.stiffness;
  body.actuation = spec.actuation;
  if (chosen)
    out.cellBody = std::move(spec);
}

int cellBodyPoints(const body::CellBodySpec &spec) {
  std::set<std::pair<int, int>> corners;
  for (const auto &c : spec.cells)
    for (int di = 0; di < 2; ++di)
      for (int dj = 0; dj < 2; ++dj)
        corners.emplace(c.i + di, c.j + dj);
  return int(corners.size());
}

} // namespace evoc::sema
