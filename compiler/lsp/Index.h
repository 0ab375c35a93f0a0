// What the language server knows about one analysed program (docs/editors.md):
// every declaration with its name's range, every use of a name resolved to
// the declaration it denotes, the checked type of every expression, and the
// settings written in each block. Built from the AST after checking; the
// server answers hover, definition, references, rename, document symbols
// and part of completion from it.
#pragma once

#include <string>
#include <vector>

#include "sema/Program.h"
#include "support/SourceRange.h"

namespace evoc {
class SourceManager;
}

namespace evoc::lsp {

enum class SymbolKind {
  File,  ///< a module (the target of an import)
  Block, ///< world, evolve, mutation, train, requires, an anonymous commands
  Physics,
  Set,      ///< an element set of a physics
  Field,    ///< a field of a set (state, temp, body, param, input)
  Endpoint, ///< `a: point` in `set spring(a: point, ...)`
  Fn,
  FnParam,
  Let,
  LoopElement, ///< `p` in `for p in point`
  WindowVar,   ///< `t` in `sum(t in 0..T: ...)`
  Material,
  Part,
  PartParam,
  Grammar,
  GrammarSymbol, ///< the left-hand side of a production
  Body,
  Controller,
  Loss,
  Commands,
};

/// The word a hover shows for a kind ("part", "grammar symbol", ...).
const char *kindWord(SymbolKind k);

struct Symbol {
  std::string name;
  SymbolKind kind = SymbolKind::Block;
  SourceRange nameRange;          ///< where the name is written (File: the file's start)
  SourceRange range;              ///< the whole declaration
  int parent = -1;                ///< the enclosing symbol (a set's physics, a field's set), or -1
  std::string hover;              ///< markdown: what it is, its declaration, its doc comment
  std::vector<std::string> ports; ///< Part: its ports, in order
  std::string set; ///< LoopElement: the set it ranges over; Endpoint: the set it points into
};

/// A name written in the source that denotes a symbol (declarations included).
struct Occurrence {
  SourceRange range;
  int symbol = -1;
  bool declaration = false;
};

/// An expression and its checked type ("vec2", "field<point, vec2>", ...).
struct Typed {
  SourceRange range;
  std::string type;
};

/// A `key = value;` in a settings block ("world", "evolve", "learn",
/// "part", ...), or a read of a world setting in an expression
/// (`world.dt`, block "world.").
struct SettingUse {
  SourceRange keyRange;
  std::string block, key;
  std::string text; ///< the setting as written, or `world.dt = 0.004`
};

class Index {
public:
  /// Indexes `program.ast` (which may hold errors: whatever sema resolved).
  static Index build(const sema::CheckedProgram &program, const SourceManager &sources);

  std::vector<Symbol> symbols;
  std::vector<Occurrence> occurrences;
  std::vector<Typed> typed;
  std::vector<SettingUse> settings;

  /// The occurrence covering byte `offset` of `file` (its end included, so
  /// that a cursor just after a name finds it), or null.
  const Occurrence *occurrenceAt(int file, int offset) const;
  /// The innermost typed expression covering `offset`, or null.
  const Typed *typeAt(int file, int offset) const;
  /// The setting key or world read covering `offset`, or null.
  const SettingUse *settingAt(int file, int offset) const;
  /// Every occurrence of symbol `s`, the declaration first.
  std::vector<const Occurrence *> occurrencesOf(int s) const;
  /// The symbols named `name` of kind `k`.
  std::vector<int> find(const std::string &name, SymbolKind k) const;
};

} // namespace evoc::lsp
