// The `requires` block: the world a library file is written for (its
// dimension, the commands it reads; docs/language.md, "Libraries"), checked
// against the program's world, or standing in for it when there is none.
#include "frontend/Imports.h"
#include "frontend/Parser.h"
#include "sema/Checker.h"
#include "support/SourceManager.h"

#include <algorithm>
#include <deque>
#include <map>
#include <set>

namespace evoc::sema {

using namespace ast;

namespace {

std::string q(const std::string &s) { return "'" + s + "'"; }
std::string quoted(const std::string &s) { return "\"" + s + "\""; }
std::string typeWord(int width) { return width == 1 ? "scalar" : "vec" + std::to_string(width); }

/// "'a'", "'a' and 'b'", "'a', 'b' and 'c'".
std::string listOf(const std::vector<std::string> &names) {
  std::string s;
  for (size_t i = 0; i < names.size(); ++i)
    s += (i == 0 ? "" : i + 1 == names.size() ? " and " : ", ") + q(names[i]);
  return s;
}

/// A command a library reads, with its width (1: scalar, 2, 3: vec2, vec3).
struct NeededCommand {
  std::string name;
  int width = 1;
};

/// An evaluated `requires` block.
struct Requirement {
  const RequiresDecl *decl = nullptr;
  const Module *module = nullptr;
  int dim = 0; ///< 0: any dimension
  SourceRange dimAt;
  std::vector<NeededCommand> commands;
  SourceRange commandsAt;
  /// world.dim -> the import path of the library to use there instead
  /// (`in_2d`, `in_3d`).
  std::map<int, std::string> instead;
  /// How the main file reaches this file: its imports, outermost first
  /// (empty for the main file itself).
  std::vector<const ImportDecl *> chain;

  /// Where a mismatch is reported: the main file's import that brings the
  /// library in, or the block itself in the main file.
  SourceRange at() const { return chain.empty() ? decl->name.range : chain.front()->pathRange; }
  /// The library as the program imports it: `"physics/mass_spring.evo"`,
  /// with the main file's import when it comes in through another library.
  std::string name() const {
    if (chain.empty())
      return "this file";
    std::string s = quoted(chain.back()->path);
    if (chain.size() > 1)
      s += " (imported through " + quoted(chain.front()->path) + ")";
    return s;
  }
};

/// The shortest chain of imports from the main file to `file`.
std::vector<const ImportDecl *> importChain(const Program &program, int file) {
  const Module *main = program.main();
  if (!main || main->file == file)
    return {};
  std::map<int, const Module *> byFile;
  for (const auto &m : program.modules)
    byFile[m->file] = m.get();
  std::map<int, std::pair<int, const ImportDecl *>> from; // file -> (importer, import)
  std::deque<int> todo = {main->file};
  std::set<int> seen = {main->file};
  while (!todo.empty()) {
    const int f = todo.front();
    todo.pop_front();
    auto it = byFile.find(f);
    if (it == byFile.end())
      continue;
    for (const auto &d : it->second->decls) {
      auto *imp = dynCast<ImportDecl>(d.get());
      if (!imp || imp->resolvedFile < 0 || !seen.insert(imp->resolvedFile).second)
        continue;
      from[imp->resolvedFile] = {f, imp};
      todo.push_back(imp->resolvedFile);
    }
  }
  std::vector<const ImportDecl *> chain;
  for (int f = file; from.count(f); f = from[f].first)
    chain.push_back(from[f].second);
  std::reverse(chain.begin(), chain.end());
  return chain;
}

/// `commands = v, h, d vec2;`: names, each with its type when not a scalar.
void evaluateCommands(Checker &C, const Setting &s, Requirement &r) {
  r.commandsAt = s.range;
  for (size_t i = 0; i < s.values.size(); ++i) {
    auto *n = dynCast<NameExpr>(s.values[i].get());
    if (!n) {
      C.diags.error(s.values[i]->range, "requires.commands lists the names of the commands the "
                                        "file reads, a vector with its type: v, h, d vec2");
      continue;
    }
    const Ident *type =
        i < s.suffixes.size() && !s.suffixes[i].name.empty() ? &s.suffixes[i] : nullptr;
    const std::string t = type ? type->name : "scalar";
    const int width = t == "scalar" ? 1 : t == "vec2" ? 2 : t == "vec3" ? 3 : 0;
    if (!width) {
      C.diags.error(type->range, "a command is a scalar, vec2 or vec3, not " + q(t));
      continue;
    }
    bool twice = false;
    for (const auto &c : r.commands)
      twice |= c.name == n->name;
    if (twice) {
      C.diags.error(n->range, "command " + q(n->name) + " is listed twice");
      continue;
    }
    r.commands.push_back({n->name, width});
  }
}

/// One block's settings; reports its own mistakes.
Requirement evaluate(Checker &C, const RequiresDecl &d, const Module &m) {
  Requirement r;
  r.decl = &d;
  r.module = &m;
  C.checkKnownKeys(d.body, "requires", {"dim", "commands", "in_2d", "in_3d"});
  std::map<int, SourceRange> insteadAt;
  for (const auto &s : d.body.settings) {
    const std::string &k = s.key.name;
    if (k == "dim") {
      const Expr *e = C.single(s, "requires.dim");
      auto v = e ? C.evalInt(*e, "requires.dim") : std::nullopt;
      if (v && *v != 2 && *v != 3)
        C.diags.error(e->range, "requires.dim must be 2 or 3, not " + std::to_string(*v));
      else if (v)
        r.dim = int(*v), r.dimAt = e->range;
    } else if (k == "commands") {
      evaluateCommands(C, s, r);
    } else if (k == "in_2d" || k == "in_3d") {
      const Expr *e = C.single(s, "requires." + k);
      auto *str = e ? dynCast<StringExpr>(e) : nullptr;
      const int dim = k == "in_2d" ? 2 : 3;
      if (e && !str) {
        C.diags.error(e->range, "requires." + k + " is the import path of the library a " +
                                    std::to_string(dim) +
                                    "D world uses instead, e.g. \"physics/mass_spring3.evo\"");
        continue;
      }
      if (!str)
        continue;
      frontend::ImportOptions io;
      io.stdlibDirs = C.options.stdlibDirs;
      io.useEnv = !C.options.ignoreEnv;
      // A warning: the file only feeds a hint, and a run's resolved.evo,
      // read back away from the stdlib, must still check.
      if (frontend::resolveImport(str->value, C.sources.path(m.file), io).empty()) {
        C.diags.warning(str->range, "cannot find " + quoted(str->value) + " (requires." + k +
                                        "), searched as an import of this file");
        continue;
      }
      r.instead[dim] = str->value;
      insteadAt[dim] = str->range;
    }
  }
  for (const auto &[dim, at] : insteadAt)
    if (r.dim == 0 || r.dim == dim) {
      C.diags.error(at, "requires.in_" + std::to_string(dim) + "d names the library to use in a " +
                            std::to_string(dim) + "D world instead of this one, so it needs " +
                            "requires.dim = " + std::to_string(dim == 2 ? 3 : 2));
      r.instead.erase(dim);
    }
  return r;
}

/// The declaration of the library at `path` (resolved from `from`) that
/// takes the place of the selected physics `selected`: its physics of the
/// closest name, or its only physics; "" when there is none.
std::string counterpart(Checker &C, const std::string &path, const Module &from,
                        const std::string &selected) {
  frontend::ImportOptions io;
  io.stdlibDirs = C.options.stdlibDirs;
  io.useEnv = !C.options.ignoreEnv;
  const std::string file = frontend::resolveImport(path, C.sources.path(from.file), io);
  const int id = file.empty() ? -1 : C.sources.loadFile(file);
  if (id < 0)
    return "";
  DiagnosticEngine quiet(C.sources); // its mistakes are its own check's to report
  auto module = frontend::parseModule(id, C.sources, quiet);
  if (!module)
    return "";
  std::vector<std::string> physics;
  for (const auto &d : module->decls)
    if (isa<PhysicsDecl>(d.get()))
      physics.push_back(d->name.name);
  const std::string c = closest(selected, physics);
  return !c.empty() ? c : physics.size() == 1 ? physics.front() : "";
}

/// world.dim differs from the library's: one error at its import naming
/// both, the library to use instead (and its physics, when the world's
/// physics comes from this library) or the world.dim to set.
void reportDim(Checker &C, const Requirement &r) {
  const int dim = C.out.world.dim;
  const std::string lib = r.name();
  std::string msg = lib + " is written for world.dim = " + std::to_string(r.dim) + ", not " +
                    std::to_string(dim) + "; ";
  auto alt = r.instead.find(dim);
  const PhysicsDecl *selected = C.out.world.physics;
  if (alt != r.instead.end()) {
    std::string use;
    if (selected && selected->range.begin.file == r.module->file)
      use = counterpart(C, alt->second, *r.module, selected->name.name);
    msg +=
        "in " + std::to_string(dim) + "D import " + quoted(alt->second) +
        (use.empty() ? " instead"
                     : " and use its physics " + q(use) + " instead of " + q(selected->name.name));
  } else {
    msg += "use a library written for dim = " + std::to_string(dim);
  }
  msg += ", or set world.dim = " + std::to_string(r.dim);
  DiagBuilder b = C.diags.error(r.at(), msg);
  const Setting *set = C.worlds.front()->body.find("dim");
  if (set && !set->values.empty())
    b.note(set->values.front()->range, "world.dim is set here");
  else
    b.note(C.worlds.front()->name.range, "world.dim is 2 where the world does not set it");
  b.note(r.dimAt, (r.chain.empty() ? std::string("this file") : quoted(r.chain.back()->path)) +
                      " states the world it is written for here");
}

/// The commands the library reads against the program's commands block
/// (or its absence). False (reported) on a mismatch.
bool checkCommandsRead(Checker &C, const Requirement &r) {
  const std::string lib = r.name();
  std::vector<std::string> names;
  for (const auto &c : r.commands)
    names.push_back(c.name);
  if (C.commandDecls.empty()) {
    C.diags
        .error(r.at(), lib + " reads the command" + (names.size() > 1 ? "s " : " ") +
                           listOf(names) +
                           ", but the program declares no commands; add a 'commands { ... }' "
                           "block whose tasks set " +
                           (names.size() > 1 ? "them" : "it"))
        .note(r.commandsAt, "the commands it reads are listed here");
    return false;
  }
  std::vector<std::string> missing;
  for (const auto &c : r.commands)
    if (C.commandIndex(c.name) < 0)
      missing.push_back(c.name);
  const SourceRange block = C.commandDecls.front()->name.range;
  if (!missing.empty()) {
    C.diags
        .error(r.at(), lib + " reads the command" + (missing.size() > 1 ? "s " : " ") +
                           listOf(missing) + ", which the commands block does not set; set " +
                           (missing.size() > 1 ? "them" : "it") + " in every task")
        .note(block, "the commands block is here");
    return false;
  }
  for (const auto &c : r.commands) {
    const int w = C.out.commands.width(size_t(C.commandIndex(c.name)));
    if (w != c.width) {
      C.diags
          .error(r.at(), lib + " reads command " + q(c.name) + " as a " + typeWord(c.width) +
                             ", but the commands block sets it to a " + typeWord(w))
          .note(block, "the commands block is here");
      return false;
    }
  }
  return true;
}

/// Without a world: the libraries' dims must agree, and the first stated
/// becomes world.dim; their commands are declared unless the program has a
/// commands block. False (reported) on a conflict.
bool standIn(Checker &C, const std::vector<Requirement> &reqs) {
  const Requirement *first = nullptr;
  for (const auto &r : reqs) {
    if (!r.dim)
      continue;
    if (!first) {
      first = &r;
      C.out.world.dim = r.dim;
      C.dimKnown = true;
    } else if (r.dim != first->dim) {
      const std::string msg =
          r.module == first->module
              ? "this requires block states world.dim = " + std::to_string(r.dim) +
                    ", an earlier one in the same file dim = " + std::to_string(first->dim) +
                    "; a file is written for one dim"
              : r.name() + " is written for world.dim = " + std::to_string(r.dim) + ", but " +
                    first->name() + " for dim = " + std::to_string(first->dim) +
                    "; one program cannot use both";
      C.diags.error(r.chain.empty() ? r.dimAt : r.at(), msg)
          .note(first->dimAt, "the other states its world here");
      return false;
    }
  }
  bool ok = true;
  for (const auto &r : reqs) {
    if (r.commands.empty())
      continue;
    if (!C.commandDecls.empty()) {
      ok = (!C.commandsOk || checkCommandsRead(C, r)) && ok;
      continue;
    }
    for (const auto &c : r.commands) {
      const int i = C.commandIndex(c.name);
      if (i < 0) {
        C.out.commands.names.push_back(c.name);
        C.out.commands.comps.push_back(c.width);
      } else if (C.out.commands.width(size_t(i)) != c.width) {
        C.diags.error(r.at(), r.name() + " reads command " + q(c.name) + " as a " +
                                  typeWord(c.width) + ", but another library as a " +
                                  typeWord(C.out.commands.width(size_t(i))));
        ok = false;
      }
    }
  }
  return ok;
}

} // namespace

bool Checker::checkRequires(const Program &program) {
  std::vector<Requirement> reqs;
  const int errorsBefore = diags.errorCount();
  for (const auto &[decl, module] : requirements) {
    reqs.push_back(evaluate(*this, *decl, *module));
    reqs.back().chain = importChain(program, module->file);
  }
  if (diags.errorCount() != errorsBefore)
    return false;
  // The library nearest the main file first: one error per import of the
  // main file, about the library it names when that one states its world.
  std::stable_sort(reqs.begin(), reqs.end(), [](const Requirement &a, const Requirement &b) {
    return a.chain.size() < b.chain.size();
  });
  if (!haveWorld)
    return standIn(*this, reqs);
  // world.dim has an error (reported): the libraries' builtins read theirs.
  for (const auto &r : reqs)
    if (!dimKnown && r.dim) {
      out.world.dim = r.dim;
      break;
    }
  bool ok = true;
  std::set<const void *> reported;
  for (const auto &r : reqs) {
    const void *key = r.chain.empty() ? static_cast<const void *>(r.decl) : r.chain.front();
    if (reported.count(key))
      continue;
    bool fits = true;
    if (r.dim && dimKnown && r.dim != out.world.dim) {
      reportDim(*this, r);
      fits = false;
    } else if (!r.commands.empty() && commandsOk) {
      fits = checkCommandsRead(*this, r);
    }
    if (!fits) {
      reported.insert(key);
      ok = false;
    }
  }
  return ok;
}

} // namespace evoc::sema
