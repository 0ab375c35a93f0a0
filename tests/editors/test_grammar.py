#!/usr/bin/env python3
# Checks the editor files of editors/ against grammar/Evo.g4: the TextMate
# grammar (run over every shipped .evo file by a small TextMate engine), the
# Vim syntax and the Emacs mode's keyword lists, and the VS Code extension's
# manifests. Standard library only; run: python3 tests/editors/test_grammar.py
import json
import pathlib
import re
import sys
import unittest

ROOT = pathlib.Path(__file__).resolve().parents[2]
EDITORS = ROOT / "editors"
GRAMMAR_JSON = EDITORS / "evo.tmLanguage.json"
EVO_FILE_DIRS = ["stdlib", "examples", "tests/data", "tests/golden", "bench"]

# ---- grammar/Evo.g4


def g4_rules(text):
    """Evo.g4's rules as {name: [token, ...]}, tokens being quoted literals
    ("'...'", kept quoted) and other words; comments dropped."""
    tokens, i = [], 0
    while i < len(text):
        c = text[i]
        if text.startswith("//", i):
            i = text.index("\n", i) if "\n" in text[i:] else len(text)
        elif text.startswith("/*", i):
            i = text.index("*/", i) + 2
        elif c == "'":
            j = i + 1
            while text[j] != "'":
                j += 2 if text[j] == "\\" else 1
            tokens.append(text[i : j + 1])
            i = j + 1
        elif c.isspace():
            i += 1
        else:
            m = re.compile(r"[A-Za-z_][A-Za-z_0-9]*|.").match(text, i)
            tokens.append(m.group())
            i = m.end()
    rules, k = {}, 0
    while k < len(tokens):
        if tokens[k] == "grammar":  # the header: grammar Evo;
            k = tokens.index(";", k) + 1
            continue
        name, end = tokens[k], tokens.index(";", k)
        assert tokens[k + 1] == ":", f"Evo.g4: expected ':' after rule {name}"
        rules[name] = tokens[k + 2 : end]
        k = end + 1
    return rules


RULES = g4_rules((ROOT / "grammar" / "Evo.g4").read_text())
PARSER_LITERALS = {
    t[1:-1] for name, body in RULES.items() if name[0].islower() for t in body if t.startswith("'")
}
KEYWORDS = {t for t in PARSER_LITERALS if re.fullmatch(r"[A-Za-z_]\w*", t)}
SYMBOLS = PARSER_LITERALS - KEYWORDS

# The reference lexer: Evo.g4's lexer rules, written as Python regexes. A
# lexer rule added to Evo.g4 fails test_lexer_rules until it is added here.
LEXER_RULES = {
    "NUMBER": r"[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?",
    "STRING": r'"(?:[^"\\\r\n]|\\[^\r\n])*"',
    "IDENT": r"[a-zA-Z_][a-zA-Z_0-9]*",
    "LINE_COMMENT": r"//[^\r\n]*",
    "BLOCK_COMMENT": r"/\*[\s\S]*?\*/",
    "WS": r"[ \t\r\n]+",
}


def lex(text):
    """(kind, start, end) for every token of `text` as Evo.g4 lexes it
    (longest match; keywords are IDENTs here); 'ERROR' for a character no
    rule takes."""
    rules = [(k, re.compile(v)) for k, v in LEXER_RULES.items()]
    rules += [("SYMBOL", re.compile(re.escape(s))) for s in SYMBOLS]
    out, i = [], 0
    while i < len(text):
        best = None
        for kind, rx in rules:
            m = rx.match(text, i)
            if m and m.end() > i and (best is None or m.end() > best[2]):
                best = (kind, i, m.end())
        best = best or ("ERROR", i, i + 1)
        out.append(best)
        i = best[2]
    return out


# ---- a small TextMate engine: match, begin/end (with patterns inside),
# captures, include of #name and $self; scopes per character.


class TextMate:
    def __init__(self, grammar):
        self.grammar = grammar
        self.repo = grammar.get("repository", {})
        self.cache = {}

    def rx(self, source):
        if source not in self.cache:
            self.cache[source] = re.compile(source)
        return self.cache[source]

    def flatten(self, patterns, seen=()):
        out = []
        for p in patterns:
            inc = p.get("include")
            if inc is None:
                out.append(p)
            elif inc == "$self":
                out += self.flatten(self.grammar["patterns"], seen)
            elif inc.startswith("#"):
                if inc in seen:
                    continue
                entry = self.repo[inc[1:]]
                out += self.flatten(entry.get("patterns", [entry]), seen + (inc,))
            else:
                raise AssertionError(f"include {inc} is not supported by the test engine")
        return out

    def tokenize(self, text):
        """A list, per line, of per-character scope lists (outermost first)."""
        stack = [{"end": None, "patterns": self.flatten(self.grammar["patterns"]), "scopes": [], "caps": None}]
        result = []
        for line in text.split("\n"):
            scopes = [[] for _ in line]

            def paint(a, b, names):
                for k in range(a, b):
                    scopes[k] = list(names)

            def paint_captures(m, caps, names):
                for g, spec in sorted((caps or {}).items(), key=lambda kv: int(kv[0])):
                    if m.group(int(g)) is not None and "name" in spec:
                        for k in range(m.start(int(g)), m.end(int(g))):
                            scopes[k] = scopes[k] + [spec["name"]] if int(g) else names + [spec["name"]]

            pos, steps = 0, 0
            while pos <= len(line):
                steps += 1
                assert steps < 10 * len(line) + 100, f"the grammar loops on {line!r}"
                frame = stack[-1]
                best = None
                if frame["end"] is not None:
                    m = self.rx(frame["end"]).search(line, pos)
                    if m:
                        best = (m.start(), m, None)  # the end wins a tie, as in TextMate
                for p in frame["patterns"]:
                    m = self.rx(p.get("match") or p["begin"]).search(line, pos)
                    if m and (best is None or m.start() < best[0]):
                        best = (m.start(), m, p)
                if best is None:
                    paint(pos, len(line), frame["scopes"])
                    break
                start, m, p = best
                paint(pos, start, frame["scopes"])
                if p is None:  # the frame's end
                    paint(start, m.end(), frame["scopes"])
                    paint_captures(m, frame["caps"], frame["scopes"])
                    stack.pop()
                    pos = m.end()
                    continue
                names = frame["scopes"] + ([p["name"]] if "name" in p else [])
                paint(start, m.end(), names)
                if "match" in p:
                    paint_captures(m, p.get("captures"), names)
                    if m.end() == start:  # an empty match: step over one character
                        paint(start, start + 1, frame["scopes"])
                        pos = start + 1
                    else:
                        pos = m.end()
                else:
                    paint_captures(m, p.get("beginCaptures", p.get("captures")), names)
                    inner_patterns = self.flatten(p.get("patterns", []))
                    stack.append({"end": p["end"], "patterns": inner_patterns, "scopes": names,
                                  "caps": p.get("endCaptures", p.get("captures"))})
                    pos = m.end()
            result.append(scopes)
        return result


def inner(scopes):
    return scopes[-1] if scopes else ""


def load_grammar():
    return json.loads(GRAMMAR_JSON.read_text())


TM = TextMate(load_grammar())


def scope_of(line, col):
    return inner(TM.tokenize(line)[0][col])


def all_regexes(node):
    if isinstance(node, dict):
        for k, v in node.items():
            if k in ("match", "begin", "end") and isinstance(v, str):
                yield v
            else:
                yield from all_regexes(v)
    elif isinstance(node, list):
        for v in node:
            yield from all_regexes(v)


def evo_files():
    files = []
    for d in EVO_FILE_DIRS:
        files += sorted((ROOT / d).rglob("*.evo"))
    return files


# ---- Vim and Emacs keyword lists

VIM_OPTIONS = re.compile(r"\w+=|contained$|skipwhite$|skipnl$|skipempty$|transparent$|display$")


def vim_keyword_groups():
    groups = {}
    for line in (EDITORS / "nvim" / "syntax" / "evo.vim").read_text().splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[0] in ("syn", "syntax") and parts[1] == "keyword":
            words = [w for w in parts[3:] if not VIM_OPTIONS.match(w)]
            groups.setdefault(parts[2], set()).update(words)
    return groups


def emacs_lists():
    text = (EDITORS / "emacs" / "evo-mode.el").read_text()
    lists = {}
    for m in re.finditer(r"\(defconst\s+(evo-mode-[\w-]+)\s+'\(([^)]*)\)", text):
        lists[m.group(1)] = set(re.findall(r'"([^"]*)"', m.group(2)))
    return lists


def partition(groups):
    """The keywords' grouping as a set of frozensets (group names ignored)."""
    return {frozenset(ws & KEYWORDS) for ws in groups.values() if ws & KEYWORDS}


def builtins_of_sema():
    text = (ROOT / "compiler" / "sema" / "Calls.cpp").read_text()
    names = set(re.findall(r'\{"(\w+)", Builtin::', text))
    assert names, "no builtins found in compiler/sema/Calls.cpp (its kBuiltins table moved?)"
    return names


# Constructs outside the common subset of Oniguruma (VS Code, GitHub) and
# Python's re, which this test compiles the grammar's regexes with.
NOT_PORTABLE = [
    (r"\(\?<[A-Za-z]", "named group"),
    (r"\(\?P", "Python-only group"),
    (r"\(\?>", "atomic group"),
    (r"[*+?}][+]", "possessive quantifier"),
    (r"\\[GAzZKhHRXp]", "anchor or class not shared by both engines"),
    (r"\(\?[imsx-]+[):]", "inline flags"),
    (r"\\[1-9]", "backreference"),
]


class GrammarFile(unittest.TestCase):
    def test_header(self):
        g = load_grammar()
        self.assertEqual(g["scopeName"], "source.evo")
        self.assertEqual(g["fileTypes"], ["evo"])

    def test_regexes_compile_and_are_portable(self):
        for source in all_regexes(load_grammar()):
            re.compile(source)
            for bad, what in NOT_PORTABLE:
                self.assertIsNone(re.search(bad, source), f"{what} in {source!r}")

    def test_includes_resolve_and_keys_are_known(self):
        g = load_grammar()
        TM.flatten(g["patterns"])
        for entry in g["repository"].values():
            for p in TM.flatten(entry.get("patterns", [entry])):
                # what the test engine implements; contentName, while and
                # applyEndPatternLast would need it to grow first
                known = {"name", "match", "captures", "begin", "end", "beginCaptures", "endCaptures",
                         "patterns", "comment"}
                self.assertEqual(set(p) - known, set(), p)

    def test_lexer_rules(self):
        lexer = {name for name in RULES if name[0].isupper()}
        self.assertEqual(lexer, set(LEXER_RULES), "Evo.g4's lexer rules changed: update LEXER_RULES and the grammar")

    def test_every_keyword_is_a_keyword(self):
        self.assertTrue(KEYWORDS >= {"world", "fn", "import", "true"}, KEYWORDS)
        for kw in sorted(KEYWORDS):
            s = scope_of(f"{kw} x {{", 0)
            self.assertRegex(s, r"^(keyword|constant\.language)\.", f"'{kw}' (Evo.g4) is scoped {s!r}")
            # alone, where no declaration pattern takes it: the same group
            # (but `loss` alone is the loss's value in an expression)
            alone = scope_of(f"{kw} ", 0)
            self.assertEqual(alone, "variable.language.loss.evo" if kw == "loss" else s, f"'{kw}' alone")

    def test_every_symbol_is_an_operator_or_punctuation(self):
        for sym in sorted(SYMBOLS):
            line = f"a {sym} b"
            scopes = TM.tokenize(line)[0]
            for k in range(2, 2 + len(sym)):
                self.assertRegex(inner(scopes[k]), r"^(keyword\.operator|punctuation)\.", f"'{sym}' in {line!r}")

    def test_builtins_and_types(self):
        for name in sorted(builtins_of_sema()):
            self.assertEqual(scope_of(f"{name}(x)", 0), "support.function.builtin.evo", name)
        self.assertEqual(scope_of("foo(x)", 0), "variable.function.evo")
        for t in sorted(vim_keyword_groups()["evoType"]):
            self.assertEqual(scope_of(f"fn f(x: {t}) -> {t} {{", 9), "storage.type.primitive.evo", t)

    def test_comments_strings_numbers(self):
        cases = [
            ('import "a/b.evo"; // world fn "x" 3',
             {8: "string.quoted.double.evo", 22: "comment.line.double-slash.evo"}),
            ('x = "a\\"b world";', {5: "string.quoted.double.evo", 6: "constant.character.escape.evo",
                                    12: "string.quoted.double.evo"}),
            ("/* set */ world {", {3: "comment.block.evo", 10: "keyword.declaration.evo"}),
            ("x = 3e4 + 0.5 - 1e-4 + 2.5e3 + 7;", {4: "constant.numeric.float.evo", 10: "constant.numeric.float.evo",
                                                 17: "constant.numeric.float.evo", 24: "constant.numeric.float.evo",
                                                 31: "constant.numeric.integer.evo"}),
            ("sum(t in 101..499: x)", {9: "constant.numeric.integer.evo", 12: "keyword.operator.range.evo"}),
        ]
        for line, want in cases:
            for col, scope in want.items():
                self.assertEqual(scope_of(line, col), scope, f"column {col} of {line!r}")
        # a block comment across lines, holding keywords and a string
        lines = TM.tokenize('/* world\n fn "x"\n step */ set')
        self.assertTrue(all(inner(s) == "comment.block.evo" for s in lines[1]))
        self.assertEqual(inner(lines[2][2]), "comment.block.evo")
        self.assertEqual(inner(lines[2][10]), "keyword.declaration.evo")
        # an unterminated string ends at the end of its line
        lines = TM.tokenize('x = "abc\nworld {')
        self.assertEqual(inner(lines[1][0]), "keyword.declaration.evo")

    def test_names(self):
        cases = [
            ("physics falling {", {8: "entity.name.type.evo"}),
            ("fn sq(x: scalar) -> scalar {", {3: "entity.name.function.evo"}),
            ("loss displacement = -mean(x);", {5: "entity.name.function.evo"}),
            ("body lattice Grid {", {5: "support.type.body-kind.evo", 13: "entity.name.type.evo"}),
            ("body grammar Blocks {", {5: "keyword.declaration.evo", 13: "entity.name.type.evo"}),
            ("  state x: vec2;", {2: "storage.modifier.evo", 8: "variable.other.member.evo"}),
            ("  param len = 1 in 0.6 .. 1.8;", {2: "storage.modifier.evo", 8: "variable.other.member.evo"}),
            ("  limit Leg = 4;", {2: "storage.modifier.evo"}),
            ("  Root -> triangle<top>(bottom: B?);", {2: "entity.name.type.symbol.evo"}),
            ("  physics = mass_spring;", {2: "variable.other.property.evo"}),
            ("  optimizer = adam(lr = 3e-3, beta1 = 0.9);", {2: "variable.other.property.evo",
                                                          19: "variable.parameter.evo", 30: "variable.parameter.evo"}),
            ("  learn {", {2: "entity.name.section.evo"}),
            ("  fitness = max(-loss) + world.dt;", {17: "variable.language.loss.evo",
                                                  25: "variable.language.world.evo"}),
            ("  for p in point {", {2: "keyword.control.evo", 13: "variable.other.evo"}),
            ("  param k: scalar = 100;", {11: "storage.type.primitive.evo"}),
            ("  p.x = p.x + 1;", {4: ""}),
        ]
        for line, want in cases:
            for col, scope in want.items():
                self.assertEqual(scope_of(line, col), scope, f"column {col} of {line!r}")


class ShippedFiles(unittest.TestCase):
    """The grammar over every .evo file of the repository, against Evo.g4's
    lexer: comments, strings and numbers scoped as such, every keyword a
    keyword (or, where Evo.g4 lets it be a name, a setting key, a named
    argument or world/loss in an expression), every symbol an operator or
    punctuation, and no other word a keyword."""

    def check_file(self, path):
        text = path.read_text()
        scopes = TM.tokenize(text)
        starts = [0]
        for line in text.split("\n"):
            starts.append(starts[-1] + len(line) + 1)
        flat = [s for line in scopes for s in line + [[]]]  # [] for the newline
        tokens = [t for t in lex(text) if t[0] != "WS"]
        problems, error_line = [], None
        for n, (kind, a, b) in enumerate(tokens):
            word = text[a:b]
            here = [inner(flat[k]) for k in range(a, b) if not text[k].isspace()]
            where = f"{path.relative_to(ROOT)}:{text.count(chr(10), 0, a) + 1}: {kind} {word[:30]!r}"
            nxt = text[tokens[n + 1][1] : tokens[n + 1][2]] if n + 1 < len(tokens) else ""
            nxt_kind = tokens[n + 1][0] if n + 1 < len(tokens) else ""
            line_no = text.count("\n", 0, a)
            if kind == "ERROR":  # an unterminated string, say: skip the rest of its line
                error_line = line_no
            if line_no == error_line:
                continue
            if kind in ("LINE_COMMENT", "BLOCK_COMMENT"):
                ok = all(any(x.startswith("comment.") for x in flat[k]) for k in range(a, b) if not text[k].isspace())
            elif kind == "STRING":
                ok = all(any(x.startswith("string.") for x in flat[k]) for k in range(a, b))
            elif kind == "NUMBER":
                ok = all(s.startswith("constant.numeric.") for s in here)
            elif kind == "SYMBOL":
                ok = all(re.match(r"(keyword\.operator|punctuation)\.", s) for s in here)
            elif word in KEYWORDS:
                s = here[0]
                if nxt == "=":
                    ok = s in ("variable.other.property.evo", "variable.parameter.evo")
                elif word == "world" and nxt == ".":
                    ok = s == "variable.language.world.evo"
                elif word == "loss" and nxt_kind != "IDENT":
                    ok = s == "variable.language.loss.evo"
                elif word == "body" and nxt_kind == "IDENT" and text[tokens[n + 2][1]] == ":":
                    ok = s == "storage.modifier.evo"  # the field kind: `body rest: scalar;`
                else:
                    ok = re.match(r"(keyword|constant\.language)\.", s) is not None
            else:  # any other name
                ok = not any(re.match(r"(keyword\.(?!operator)|comment|string|constant\.numeric)", s) for s in here)
            if not ok:
                problems.append(f"{where} scoped {here[:3]}")
        return problems

    def test_shipped_files(self):
        files = evo_files()
        self.assertGreater(len(files), 100)
        problems = []
        for path in files:
            problems += self.check_file(path)
        self.assertEqual(problems[:20], [], f"{len(problems)} mis-scoped tokens")


class VimAndEmacs(unittest.TestCase):
    def tm_groups(self):
        groups = {}
        for kw in KEYWORDS:
            groups.setdefault(scope_of(f"{kw} x {{", 0), set()).add(kw)
        return groups

    def test_vim_keywords(self):
        vim = vim_keyword_groups()
        keyword_groups = {g: ws for g, ws in vim.items() if ws & KEYWORDS}
        for g, ws in keyword_groups.items():
            self.assertEqual(ws - KEYWORDS, set(), f"{g} mixes Evo.g4 keywords with other words")
        self.assertEqual(set().union(*keyword_groups.values()), KEYWORDS, "syntax/evo.vim vs Evo.g4")
        self.assertEqual(partition(vim), partition(self.tm_groups()), "syntax/evo.vim groups vs the TextMate grammar")
        types = vim["evoType"]
        self.assertEqual(vim["evoBuiltin"] | (builtins_of_sema() & types), builtins_of_sema())

    def test_emacs_keywords(self):
        el = emacs_lists()
        keyword_lists = {k: v for k, v in el.items() if k.endswith("-keywords")}
        self.assertEqual(set().union(*keyword_lists.values()), KEYWORDS, "evo-mode.el vs Evo.g4")
        for k, ws in keyword_lists.items():
            self.assertEqual(ws - KEYWORDS, set(), f"{k} holds words that are not Evo.g4 keywords")
        self.assertEqual(partition(keyword_lists), partition(self.tm_groups()), "evo-mode.el groups vs TextMate")
        self.assertEqual(el["evo-mode-types"], vim_keyword_groups()["evoType"])
        self.assertEqual(el["evo-mode-builtins"] | (builtins_of_sema() & el["evo-mode-types"]), builtins_of_sema())

    def test_emacs_parens_balance(self):
        text = (EDITORS / "emacs" / "evo-mode.el").read_text()
        depth, i = 0, 0
        while i < len(text):
            c = text[i]
            if c == ";":
                i = text.find("\n", i)
                i = len(text) if i < 0 else i
            elif c == '"':
                i += 1
                while text[i] != '"':
                    i += 2 if text[i] == "\\" else 1
            elif c == "?":  # a character literal: ?x, ?\(
                i += 2 if text[i + 1] == "\\" else 1
            elif c == "(":
                depth += 1
            elif c == ")":
                depth -= 1
                self.assertGreaterEqual(depth, 0, f"unbalanced ')' at offset {i}")
            i += 1
        self.assertEqual(depth, 0, "unbalanced parentheses in evo-mode.el")


class VSCode(unittest.TestCase):
    def test_manifests(self):
        ext = EDITORS / "vscode"
        pkg = json.loads((ext / "package.json").read_text())
        (lang,) = pkg["contributes"]["languages"]
        self.assertEqual(lang["id"], "evo")
        self.assertIn(".evo", lang["extensions"])
        self.assertTrue((ext / lang["configuration"]).is_file())
        (gram,) = pkg["contributes"]["grammars"]
        self.assertEqual(gram["scopeName"], "source.evo")
        self.assertEqual(gram["language"], "evo")
        path = ext / gram["path"]
        self.assertTrue(path.is_file(), path)
        # the extension's copy is the grammar itself (editors/README.md)
        self.assertEqual(path.read_bytes(), GRAMMAR_JSON.read_bytes(), "cp editors/evo.tmLanguage.json " + str(path))
        conf = json.loads((ext / lang["configuration"]).read_text())
        self.assertEqual(conf["comments"], {"lineComment": "//", "blockComment": ["/*", "*/"]})
        self.assertIn(["{", "}"], conf["brackets"])
        for key in ("autoClosingPairs", "surroundingPairs", "folding"):
            self.assertIn(key, conf)


if __name__ == "__main__":
    unittest.main(verbosity=1)
