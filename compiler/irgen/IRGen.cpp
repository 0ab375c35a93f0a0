// irgen's entry point and the module layout: element sets and the buffers
// that hold each field, named as IRGen.h documents.
#include "irgen/IRGen.h"

#include <fmt/format.h>

#include "irgen/Lowerer.h"
#include "support/Diagnostics.h"
#include "support/SourceManager.h"

namespace evoc::irgen {

int ensureBuffer(ir::Module &m, ir::Buffer buf) {
  int existing = m.findBuffer(buf.name);
  if (existing >= 0)
    return existing;
  m.buffers.push_back(std::move(buf));
  return int(m.buffers.size()) - 1;
}

int Lowerer::setId(const ast::SetDecl *s) {
  int id = m_.findSet(s->name.name);
  if (id >= 0)
    return id;
  ir::ElementSet set;
  set.name = s->name.name;
  set.fromBody = true;
  m_.sets.push_back(set);
  return int(m_.sets.size()) - 1;
}

static std::string fieldName(const ast::FieldDecl *f) {
  return f->owner->name.name + "." + f->name.name;
}

int Lowerer::fieldBuffer(const ast::FieldDecl *f) {
  ir::Buffer buf;
  buf.name = fieldName(f);
  buf.field = buf.name;
  buf.sets = {setId(f->owner)};
  buf.comps = comps(f->type.resolved);
  switch (f->kind) {
  case ast::FieldKind::State:
    buf.role = ir::Role::State;
    buf.differentiable = true;
    buf.start = f->initValue;
    break;
  case ast::FieldKind::Body:
    buf.role = ir::Role::Body;
    break;
  case ast::FieldKind::Param: {
    buf.role = ir::Role::Param;
    buf.differentiable = true;
    buf.field = f->name.name;
    auto *num = f->init ? ast::dynCast<ast::NumberExpr>(f->init.get()) : nullptr;
    if (f->init && !num)
      unsupported(f->init->range, "a param field's initial value must be a number");
    if (num && num->value != 0) {
      buf.init = "constant";
      buf.initGain = num->value;
    }
    break;
  }
  case ast::FieldKind::Temp:
  case ast::FieldKind::Input:
    buf.role = ir::Role::Temp;
    break;
  }
  return ensureBuffer(m_, std::move(buf));
}

ir::Buffer Lowerer::stateFieldBuffer(const ast::FieldDecl *f, ir::Role role) {
  ir::Buffer buf;
  buf.field = fieldName(f);
  buf.role = role;
  buf.sets = {setId(f->owner)};
  buf.comps = comps(f->type.resolved);
  buf.differentiable = true;
  buf.start = f->initValue;
  return buf;
}

int Lowerer::nextStateBuffer(const ast::FieldDecl *f) {
  ir::Buffer buf = stateFieldBuffer(f, ir::Role::NextState);
  buf.name = buf.field + ".next";
  return ensureBuffer(m_, std::move(buf));
}

int Lowerer::timedStateBuffer(const ast::FieldDecl *f, int64_t time) {
  int64_t last = prog_.world.steps - 1;
  ir::Buffer buf = stateFieldBuffer(f, ir::Role::State);
  if (time == 0) {
    buf.time = ir::TimeRef::First;
    buf.name = buf.field + "@0";
  } else if (time == last) {
    buf.time = ir::TimeRef::Last;
    buf.name = buf.field + "@T";
  } else {
    buf.time = ir::TimeRef::Fixed;
    buf.fixedTime = time;
    buf.name = fmt::format("{}@{}", buf.field, time);
  }
  return ensureBuffer(m_, std::move(buf));
}

int Lowerer::offsetStateBuffer(const ast::FieldDecl *f, int64_t offset) {
  ir::Buffer buf = stateFieldBuffer(f, ir::Role::State);
  buf.time = ir::TimeRef::Offset;
  buf.fixedTime = offset;
  buf.name = fmt::format("{}@t{}", buf.field, offset);
  return ensureBuffer(m_, std::move(buf));
}

int Lowerer::commandBuffer(int index, ir::TimeRef time, int64_t at) {
  const std::string &name = prog_.commands.names.at(size_t(index));
  ir::Buffer buf;
  buf.field = "cmd." + name;
  buf.role = ir::Role::Command;
  buf.time = time;
  buf.column = prog_.commands.column(size_t(index));
  buf.comps = prog_.commands.width(size_t(index));
  if (time == ir::TimeRef::Fixed || time == ir::TimeRef::Offset)
    buf.fixedTime = at;
  switch (time) {
  case ir::TimeRef::Current:
    buf.name = buf.field;
    break;
  case ir::TimeRef::First:
    buf.name = buf.field + "@0";
    break;
  case ir::TimeRef::Last:
    buf.name = buf.field + "@T";
    break;
  case ir::TimeRef::Fixed:
    buf.name = fmt::format("{}@{}", buf.field, at);
    break;
  case ir::TimeRef::Offset:
    buf.name = fmt::format("{}@t{}", buf.field, at);
    break;
  }
  return ensureBuffer(m_, std::move(buf));
}

Val Lowerer::commandValue(int index, ir::TimeRef time, int64_t at) {
  int buf = commandBuffer(index, time, at);
  Val v;
  for (int c = 0; c < prog_.commands.width(size_t(index)); ++c)
    v.push_back(b_.load(buf, b_.constI(c)));
  return v;
}

int Lowerer::endpointBuffer(const ast::EndpointDecl *e) {
  ir::Buffer buf;
  buf.name = e->owner->name.name + "." + e->name.name;
  buf.field = buf.name;
  buf.elem = ir::Type::I;
  buf.role = ir::Role::Body;
  buf.sets = {setId(e->owner)};
  return ensureBuffer(m_, std::move(buf));
}

/// The sets the world fills (docs/language.md, "Objects"): `object`, one
/// element per object with its centre, half extents and mass known here,
/// and each set of (point, object) pairs, point-major.
static void worldSets(const sema::CheckedProgram &prog, ir::Module &m) {
  const auto &objects = prog.world.ground.objects;
  const int dim = prog.world.dim;
  const int64_t n = int64_t(objects.size());
  for (const auto &s : prog.physics->sets) {
    ir::ElementSet &set = m.sets[size_t(m.findSet(s->name.name))];
    if (s->grid) { // the world's grid nodes (docs/language.md, "Grids and particles")
      set.fromBody = false;
      set.grid = true;
      set.base = 1;
      for (int64_t n : prog.world.gridNodes)
        set.base *= n;
      continue;
    }
    if (s->name.name == "object") {
      set.fromBody = false;
      set.base = n;
      std::vector<double> centre, half, mass;
      for (const WorldObject &o : objects) {
        for (int k = 0; k < dim; ++k) {
          centre.push_back(0.5 * (o.lo[size_t(k)] + o.hi[size_t(k)]));
          half.push_back(0.5 * (o.hi[size_t(k)] - o.lo[size_t(k)]));
        }
        mass.push_back(o.mass);
      }
      for (const auto &f : s->fields) {
        const std::string name = "object." + f->name.name;
        if (f->kind == ast::FieldKind::State && f->name.name == "x")
          set.values.emplace_back(name, centre);
        else if (f->kind == ast::FieldKind::Body)
          set.values.emplace_back(name, f->name.name == "half" ? half : mass);
      }
      continue;
    }
    bool pairs = false;
    for (const auto &e : s->endpoints)
      pairs = pairs || (e.target && e.target->name.name == "object");
    if (!pairs)
      continue;
    set.fromBody = false;
    for (const auto &e : s->endpoints) {
      const int target = m.findSet(e.target->name.name);
      set.pairs.emplace_back(s->name.name + "." + e.name.name, target);
      if (e.target->name.name == "point")
        set.terms.emplace_back(target, n);
    }
  }
}

std::optional<ir::Module> lowerProgram(const sema::CheckedProgram &prog,
                                       const SourceManager &sources, DiagnosticEngine &diags) {
  ir::Module m;
  m.name = prog.ast && prog.ast->main() ? prog.ast->main()->path : "evoc";
  m.precision =
      prog.world.precision == sema::Precision::F32 ? ir::Precision::F32 : ir::Precision::F64;
  for (int f = 0; f < sources.numFiles(); ++f)
    m.files.push_back(sources.path(f));
  if (!prog.physics) {
    diags.error("the program declares no physics: nothing to compile (import "
                "\"physics/mass_spring.evo\" and set world.physics)");
    return std::nullopt;
  }
  for (const auto &s : prog.physics->sets)
    if (s->grid && prog.world.gridNodes.empty()) {
      diags.error(s->kindWord.range,
                  "set '" + s->name.name +
                      "' is a grid, but the world has no grid: add world { grid = grid(nodes = "
                      "(128, 128), dx = H); } (docs/language.md, \"Grids and particles\")");
      return std::nullopt;
    }
  // Element sets in the physics' declaration order, so point = 0, spring = 1.
  for (const auto &s : prog.physics->sets) {
    ir::ElementSet set;
    set.name = s->name.name;
    set.fromBody = true;
    m.sets.push_back(set);
  }
  worldSets(prog, m);
  try {
    lowerStep(prog, m);
    lowerLoss(prog, m);
  } catch (const LowerError &e) {
    diags.error(e.range, e.message);
    return std::nullopt;
  }
  return m;
}

} // namespace evoc::irgen
