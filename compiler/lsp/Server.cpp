// The language server (lsp/Server.h, docs/editors.md): framing, the document
// store, diagnostics and the queries.
#include "lsp/Server.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <istream>
#include <optional>
#include <ostream>
#include <regex>

#include <fmt/format.h>

#include "frontend/Format.h"
#include "frontend/Imports.h"
#include "sema/SettingKeys.h"
#include "support/Diagnostics.h"

namespace evoc::lsp {

using json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

// JSON-RPC and LSP error codes.
constexpr int kParseError = -32700, kInvalidRequest = -32600, kMethodNotFound = -32601,
              kInvalidParams = -32602, kInternalError = -32603, kNotInitialized = -32002,
              kRequestFailed = -32803;

// Bodies beyond this are refused (and skipped): no .evo file is near it.
constexpr size_t kMaxBody = size_t(64) << 20;

struct RpcError {
  int code;
  std::string message;
};

json errorResponse(const json &id, int code, const std::string &message) {
  return {{"jsonrpc", "2.0"}, {"id", id}, {"error", {{"code", code}, {"message", message}}}};
}

// UTF-16 code units of the UTF-8 text `s` (LSP's default position encoding).
int utf16Length(std::string_view s) {
  int n = 0;
  for (size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    int len = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    n += len == 4 ? 2 : 1;
    i += size_t(len);
  }
  return n;
}

// Bytes of the first `units` UTF-16 code units of `s` (clamped to s).
size_t utf16Prefix(std::string_view s, int64_t units) {
  size_t i = 0;
  while (i < s.size() && units > 0) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    int len = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    units -= len == 4 ? 2 : 1;
    i = std::min(s.size(), i + size_t(len));
  }
  return i;
}

json position(const SourceManager &sm, const SourceLoc &l) {
  if (!l.valid())
    return {{"line", 0}, {"character", 0}};
  std::string_view line = sm.lineText(l.file, l.line);
  size_t col = std::min(line.size(), size_t(std::max(l.col - 1, 0)));
  return {{"line", l.line - 1}, {"character", utf16Length(line.substr(0, col))}};
}

json range(const SourceManager &sm, const SourceRange &r) {
  json b = position(sm, r.begin);
  json e = r.end.valid() && r.end.offset > r.begin.offset ? position(sm, r.end) : b;
  if (e == b) // an empty range: one character, so that editors show it
    e["character"] = b["character"].get<int>() + 1;
  return {{"start", b}, {"end", e}};
}

// The URI of a file of an analysis: the document's own for its main file
// (the client's name for it), else the file's path.
std::string fileUri(const std::string &docUri, const Server::Analysis &a, int file) {
  return file == a.mainFile ? docUri : pathToUri(a.sources->path(file));
}

// The notification that replaces the diagnostics shown for `uri`.
json publish(const std::string &uri, json diagnostics, std::optional<int64_t> version = {}) {
  json params = {{"uri", uri}, {"diagnostics", std::move(diagnostics)}};
  if (version)
    params["version"] = *version;
  return {{"jsonrpc", "2.0"}, {"method", "textDocument/publishDiagnostics"}, {"params", params}};
}

bool isIdentChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// LSP's SymbolKind numbers for document symbols.
int lspSymbolKind(SymbolKind k) {
  switch (k) {
  case SymbolKind::File:
    return 1;
  case SymbolKind::Block:
  case SymbolKind::Commands:
    return 3; // Namespace
  case SymbolKind::Physics:
    return 2; // Module
  case SymbolKind::Set:
    return 23; // Struct
  case SymbolKind::Field:
  case SymbolKind::Endpoint:
    return 8; // Field
  case SymbolKind::Fn:
    return 12; // Function
  case SymbolKind::Part:
  case SymbolKind::Material:
  case SymbolKind::Body:
    return 5; // Class
  case SymbolKind::Grammar:
    return 3;
  case SymbolKind::GrammarSymbol:
    return 22; // EnumMember
  case SymbolKind::Controller:
  case SymbolKind::Loss:
    return 12;
  default:
    return 13; // Variable
  }
}

// LSP's CompletionItemKind numbers.
enum CompletionKind {
  kText = 1,
  kFunction = 3,
  kField = 5,
  kVariable = 6,
  kClass = 7,
  kModule = 9,
  kProperty = 10,
  kKeyword = 14,
  kFile = 17,
  kEnumMember = 20,
};

int completionKind(SymbolKind k) {
  switch (k) {
  case SymbolKind::Part:
  case SymbolKind::Material:
  case SymbolKind::Body:
    return kClass;
  case SymbolKind::Fn:
  case SymbolKind::Controller:
  case SymbolKind::Loss:
    return kFunction;
  case SymbolKind::Physics:
  case SymbolKind::Grammar:
    return kModule;
  case SymbolKind::GrammarSymbol:
    return kEnumMember;
  case SymbolKind::Field:
  case SymbolKind::Endpoint:
    return kField;
  default:
    return kVariable;
  }
}

// The language's keywords (grammar/Evo.g4), offered where nothing narrower
// applies.
const std::vector<std::string> &keywords() {
  static const std::vector<std::string> k = {
      "import",   "world", "physics",  "set",      "state",      "temp",  "body",   "param",
      "input",    "step",  "for",      "in",       "let",        "fn",    "return", "if",
      "then",     "else",  "part",     "material", "grammar",    "limit", "depth",  "scale",
      "lattice",  "cells", "voxel",    "mutation", "controller", "loss",  "evolve", "learn",
      "commands", "train", "requires", "true",     "false"};
  return k;
}

} // namespace

// ------------------------------------------------------------- framing ----

Frame readFrame(std::istream &in) {
  Frame f;
  std::string line;
  int64_t length = -1;
  bool any = false;
  while (std::getline(in, line)) {
    any = true;
    if (!line.empty() && line.back() == '\r')
      line.pop_back();
    if (line.empty())
      break;
    const std::string key = "content-length:";
    std::string lower = line.substr(0, key.size());
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return char(std::tolower(c)); });
    if (lower == key) {
      char *end = nullptr;
      std::string v = line.substr(key.size());
      length = std::strtoll(v.c_str(), &end, 10);
      if (end == v.c_str() || length < 0)
        length = -2;
    }
  }
  if (!any || (!in && length < 0))
    return f; // Eof
  if (length < 0) {
    f.kind = Frame::Malformed;
    f.error = length == -1 ? "a message without a Content-Length header"
                           : "a Content-Length that is not a number";
    return f;
  }
  if (size_t(length) > kMaxBody) {
    f.kind = Frame::Malformed;
    f.error = fmt::format("a message of {} bytes (at most {})", length, kMaxBody);
    in.ignore(length);
    return f;
  }
  f.body.resize(size_t(length));
  in.read(f.body.data(), length);
  if (in.gcount() != length)
    return Frame{}; // the stream ended inside the message
  f.kind = Frame::Message;
  return f;
}

void writeFrame(std::ostream &out, const json &message) {
  std::string body = message.dump(-1, ' ', false, json::error_handler_t::replace);
  out << "Content-Length: " << body.size() << "\r\n\r\n" << body;
  out.flush();
}

std::string uriToPath(const std::string &uri) {
  std::string p = uri.rfind("file://", 0) == 0 ? uri.substr(7) : uri;
  std::string out;
  for (size_t i = 0; i < p.size(); ++i) {
    if (p[i] == '%' && i + 2 < p.size() && std::isxdigit(static_cast<unsigned char>(p[i + 1])) &&
        std::isxdigit(static_cast<unsigned char>(p[i + 2]))) {
      out += char(std::stoi(p.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      out += p[i];
    }
  }
  return out;
}

std::string pathToUri(const std::string &path) {
  std::string abs = path;
  std::error_code ec;
  if (!path.empty() && path[0] != '/')
    abs = fs::absolute(path, ec).lexically_normal().string();
  std::string out = "file://";
  for (unsigned char c : abs) {
    if (isIdentChar(char(c)) || c == '/' || c == '.' || c == '-' || c == '~')
      out += char(c);
    else
      out += fmt::format("%{:02X}", c);
  }
  return out;
}

// -------------------------------------------------------------- server ----

Server::Server(ServerOptions options) : options_(std::move(options)) {}

const Server::Analysis *Server::analysis(const std::string &uri) const {
  auto it = docs_.find(uri);
  return it == docs_.end() ? nullptr : it->second.analysis.get();
}

std::vector<json> Server::handleText(const std::string &text) {
  json msg = json::parse(text, nullptr, false);
  if (msg.is_discarded())
    return {errorResponse(nullptr, kParseError, "the message is not JSON")};
  return handle(msg);
}

std::vector<json> Server::handle(const json &msg) {
  std::vector<json> out;
  if (!msg.is_object() || !msg.contains("method") || !msg["method"].is_string()) {
    // Responses to requests we never send are dropped; anything else is invalid.
    if (msg.is_object() && msg.contains("id") && (msg.contains("result") || msg.contains("error")))
      return out;
    out.push_back(errorResponse(msg.is_object() && msg.contains("id") ? msg["id"] : json(nullptr),
                                kInvalidRequest, "not a JSON-RPC request or notification"));
    return out;
  }
  const std::string method = msg["method"];
  const bool request = msg.contains("id");
  const json id = request ? msg["id"] : json(nullptr);
  const json params = msg.contains("params") ? msg["params"] : json::object();
  try {
    if (!initialized_ && method != "initialize" && method != "exit") {
      if (request)
        out.push_back(errorResponse(id, kNotInitialized, "the server is not initialized yet"));
      return out;
    }
    json result = dispatch(method, params, out);
    if (request)
      out.push_back({{"jsonrpc", "2.0"}, {"id", id}, {"result", result}});
  } catch (const RpcError &e) {
    if (request)
      out.push_back(errorResponse(id, e.code, e.message));
  } catch (const json::exception &e) {
    if (request)
      out.push_back(errorResponse(id, kInvalidParams, std::string("bad parameters: ") + e.what()));
  } catch (const std::exception &e) {
    if (request)
      out.push_back(errorResponse(id, kInternalError, e.what()));
  }
  return out;
}

json Server::dispatch(const std::string &method, const json &params, std::vector<json> &out) {
  if (method == "initialize") {
    initialized_ = true;
    return {{"capabilities",
             {{"positionEncoding", "utf-16"},
              {"textDocumentSync", {{"openClose", true}, {"change", 1}}},
              {"hoverProvider", true},
              {"definitionProvider", true},
              {"referencesProvider", true},
              {"renameProvider", true},
              {"documentSymbolProvider", true},
              {"documentFormattingProvider", true},
              {"completionProvider", {{"triggerCharacters", {".", "\"", "/", "(", ",", ":"}}}}}},
            {"serverInfo", {{"name", "evoc"}}}};
  }
  if (method == "initialized" || method == "$/setTrace" || method == "$/cancelRequest" ||
      method == "workspace/didChangeConfiguration" || method == "textDocument/didSave")
    return nullptr;
  if (method == "shutdown") {
    shutdown_ = true;
    return nullptr;
  }
  if (method == "exit") {
    exited_ = true;
    return nullptr;
  }
  if (method == "textDocument/didOpen") {
    const json &td = params.at("textDocument");
    Document &d = docs_[td.at("uri").get<std::string>()];
    d.uri = td.at("uri");
    d.path = uriToPath(d.uri);
    d.text = td.at("text");
    d.version = td.value("version", int64_t(0));
    check(d, out);
    return nullptr;
  }
  if (method == "textDocument/didChange") {
    Document &d = document(params);
    for (const json &c : params.at("contentChanges")) {
      if (c.contains("range")) { // an incremental edit (we asked for whole texts)
        const json &r = c.at("range");
        int b = offsetOf(d, r.at("start")), e = offsetOf(d, r.at("end"));
        d.text.replace(size_t(b), size_t(std::max(e - b, 0)), c.at("text").get<std::string>());
      } else {
        d.text = c.at("text");
      }
    }
    d.version = params.at("textDocument").value("version", d.version);
    check(d, out);
    return nullptr;
  }
  if (method == "textDocument/didClose") {
    Document &d = document(params);
    for (const std::string &uri : d.published)
      out.push_back(publish(uri, json::array()));
    docs_.erase(d.uri);
    return nullptr;
  }
  if (method == "textDocument/hover")
    return hover(params);
  if (method == "textDocument/definition")
    return definition(params);
  if (method == "textDocument/references")
    return references(params);
  if (method == "textDocument/rename")
    return rename(params);
  if (method == "textDocument/completion")
    return completion(params);
  if (method == "textDocument/documentSymbol")
    return documentSymbols(params);
  if (method == "textDocument/formatting")
    return formatting(params);
  if (method.rfind("$/", 0) == 0)
    return nullptr; // optional notifications
  throw RpcError{kMethodNotFound, "evoc lsp does not implement '" + method + "'"};
}

Server::Document &Server::document(const json &params) {
  std::string uri = params.at("textDocument").at("uri");
  auto it = docs_.find(uri);
  if (it == docs_.end())
    throw RpcError{kInvalidParams, "the document " + uri + " is not open"};
  return it->second;
}

int Server::offsetOf(const Document &doc, const json &pos) const {
  // Positions refer to the text the client has, which is doc.text.
  int64_t line = pos.at("line"), ch = pos.at("character");
  const std::string &t = doc.text;
  size_t start = 0;
  for (int64_t l = 0; l < line; ++l) {
    size_t nl = t.find('\n', start);
    if (nl == std::string::npos)
      return int(t.size());
    start = nl + 1;
  }
  size_t end = t.find('\n', start);
  std::string_view ln(t.data() + start, (end == std::string::npos ? t.size() : end) - start);
  return int(start + utf16Prefix(ln, ch));
}

void Server::check(Document &doc, std::vector<json> &out) {
  const auto t0 = std::chrono::steady_clock::now();
  auto a = std::make_unique<Analysis>();
  a->sources = std::make_unique<SourceManager>();
  a->text = doc.text;
  DiagnosticEngine diags(*a->sources);
  diags.setErrorLimit(200);
  a->mainFile = a->sources->addBuffer(doc.path, doc.text);
  sema::CheckOptions co;
  co.stdlibDirs = options_.stdlibDirs;
  a->program = sema::analyseBuffer(a->mainFile, co, *a->sources, diags);
  if (a->program)
    a->index = Index::build(*a->program, *a->sources);
  a->milliseconds =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();

  // Diagnostics by file; those without a place go to the document's start.
  const SourceManager &sm = *a->sources;
  std::map<std::string, json> byUri;
  byUri[doc.uri] = json::array();
  for (const Diagnostic &d : diags.diagnostics()) {
    int file = d.range.valid() ? d.range.begin.file : a->mainFile;
    const std::string uri = fileUri(doc.uri, *a, file);
    json item = {
        {"range", d.range.valid() ? range(sm, d.range) : range(sm, {sm.locAt(a->mainFile, 0), {}})},
        {"severity", d.severity == Severity::Error ? 1 : 2},
        {"source", "evoc"},
        {"message", d.message}};
    json related = json::array();
    for (const DiagNote &n : d.notes)
      if (n.range.valid())
        related.push_back(
            {{"location",
              {{"uri", fileUri(doc.uri, *a, n.range.begin.file)}, {"range", range(sm, n.range)}}},
             {"message", n.message}});
    if (!related.empty())
      item["relatedInformation"] = related;
    byUri[uri].push_back(item);
  }
  std::set<std::string> now;
  for (auto &[uri, list] : byUri) {
    now.insert(uri);
    out.push_back(publish(uri, std::move(list), doc.version));
  }
  for (const std::string &uri : doc.published) // files whose problems are gone
    if (!now.count(uri))
      out.push_back(publish(uri, json::array()));
  doc.published = now;
  if (a->program) // it parsed: navigation moves to it
    doc.analysis = std::move(a);
}

// ------------------------------------------------------------- queries ----

json Server::hover(const json &params) {
  Document &d = document(params);
  const Analysis *a = d.analysis.get();
  if (!a)
    return nullptr;
  const int off = offsetOf(d, params.at("position"));
  const SourceManager &sm = *a->sources;
  std::string text;
  SourceRange at;
  if (const Occurrence *o = a->index.occurrenceAt(a->mainFile, off)) {
    const Symbol &s = a->index.symbols[size_t(o->symbol)];
    text = s.hover;
    at = o->range;
    if (const Typed *t = a->index.typeAt(a->mainFile, off);
        t && t->range.begin.offset == o->range.begin.offset &&
        t->range.end.offset == o->range.end.offset && s.kind != SymbolKind::Let)
      text = fmt::format("`{}`: {}\n\n", s.name, t->type) + text;
  } else if (const SettingUse *su = a->index.settingAt(a->mainFile, off)) {
    std::string block = su->block == "world." ? "world" : su->block;
    text = fmt::format("```evo\n{}\n```", su->text);
    if (const sema::SettingKey *k = sema::findSettingKey(block, su->key))
      text = fmt::format("setting `{}.{}`: {}\n\n", block, su->key, k->doc) + text;
    at = su->keyRange;
  } else if (const Typed *t = a->index.typeAt(a->mainFile, off)) {
    std::string_view src = sm.text(a->mainFile);
    text = fmt::format("```evo\n{}\n```\ntype: `{}`",
                       src.substr(size_t(t->range.begin.offset),
                                  size_t(t->range.end.offset - t->range.begin.offset)),
                       t->type);
    at = t->range;
  } else {
    return nullptr;
  }
  return {{"contents", {{"kind", "markdown"}, {"value", text}}}, {"range", range(sm, at)}};
}

json Server::definition(const json &params) {
  Document &d = document(params);
  const Analysis *a = d.analysis.get();
  if (!a)
    return nullptr;
  const Occurrence *o = a->index.occurrenceAt(a->mainFile, offsetOf(d, params.at("position")));
  if (!o)
    return nullptr;
  const Symbol &s = a->index.symbols[size_t(o->symbol)];
  const SourceManager &sm = *a->sources;
  int file = s.nameRange.begin.file;
  return {{"uri", fileUri(d.uri, *a, file)}, {"range", range(sm, s.nameRange)}};
}

json Server::references(const json &params) {
  Document &d = document(params);
  const Analysis *a = d.analysis.get();
  json out = json::array();
  if (!a)
    return out;
  const Occurrence *o = a->index.occurrenceAt(a->mainFile, offsetOf(d, params.at("position")));
  if (!o)
    return out;
  const bool withDecl = params.value("context", json::object()).value("includeDeclaration", true);
  const SourceManager &sm = *a->sources;
  for (const Occurrence *r : a->index.occurrencesOf(o->symbol)) {
    if (r->declaration && !withDecl)
      continue;
    int file = r->range.begin.file;
    out.push_back({{"uri", fileUri(d.uri, *a, file)}, {"range", range(sm, r->range)}});
  }
  return out;
}

json Server::rename(const json &params) {
  Document &d = document(params);
  const Analysis *a = d.analysis.get();
  if (!a || a->text != d.text)
    throw RpcError{kRequestFailed, "the file does not parse now; fix it before renaming"};
  const Occurrence *o = a->index.occurrenceAt(a->mainFile, offsetOf(d, params.at("position")));
  if (!o)
    throw RpcError{kRequestFailed, "there is no name to rename here"};
  const Symbol &s = a->index.symbols[size_t(o->symbol)];
  const std::string name = params.at("newName");
  static const std::regex ident("[A-Za-z_][A-Za-z0-9_]*");
  if (!std::regex_match(name, ident))
    throw RpcError{kInvalidParams, "'" + name + "' is not a name"};
  if (s.kind == SymbolKind::File || s.kind == SymbolKind::Block)
    throw RpcError{kRequestFailed, "a file or block cannot be renamed"};
  if (s.nameRange.begin.file != a->mainFile)
    throw RpcError{kRequestFailed, fmt::format("'{}' is declared in {}, a library this file "
                                               "imports; rename it there",
                                               s.name, a->sources->path(s.nameRange.begin.file))};
  json changes = json::object();
  const SourceManager &sm = *a->sources;
  for (const Occurrence *r : a->index.occurrencesOf(o->symbol)) {
    int file = r->range.begin.file;
    const std::string uri = fileUri(d.uri, *a, file);
    changes[uri].push_back({{"range", range(sm, r->range)}, {"newText", name}});
  }
  return {{"changes", changes}};
}

json Server::documentSymbols(const json &params) {
  Document &d = document(params);
  const Analysis *a = d.analysis.get();
  json out = json::array();
  if (!a)
    return out;
  const Index &ix = a->index;
  const SourceManager &sm = *a->sources;
  // Children of each symbol of the main file (let, loop and window
  // variables and fn parameters stay out of the outline).
  std::map<int, std::vector<int>> children;
  std::vector<int> roots;
  for (int i = 0; i < int(ix.symbols.size()); ++i) {
    const Symbol &s = ix.symbols[size_t(i)];
    if (s.kind == SymbolKind::File || s.kind == SymbolKind::Let ||
        s.kind == SymbolKind::LoopElement || s.kind == SymbolKind::WindowVar ||
        s.kind == SymbolKind::FnParam || !s.range.valid() || s.range.begin.file != a->mainFile)
      continue;
    (s.parent >= 0 ? children[s.parent] : roots).push_back(i);
  }
  std::function<json(int)> item = [&](int i) {
    const Symbol &s = ix.symbols[size_t(i)];
    json r = range(sm, s.range);
    json sel = s.nameRange.valid() ? range(sm, s.nameRange) : r;
    json j = {{"name", s.name},
              {"detail", kindWord(s.kind)},
              {"kind", lspSymbolKind(s.kind)},
              {"range", r},
              {"selectionRange", sel}};
    json kids = json::array();
    for (int c : children[i])
      kids.push_back(item(c));
    if (!kids.empty())
      j["children"] = kids;
    return j;
  };
  auto bySource = [&](int x, int y) {
    return ix.symbols[size_t(x)].range.begin.offset < ix.symbols[size_t(y)].range.begin.offset;
  };
  std::sort(roots.begin(), roots.end(), bySource);
  for (auto &[parent, kids] : children)
    std::sort(kids.begin(), kids.end(), bySource);
  for (int r : roots)
    out.push_back(item(r));
  return out;
}

namespace {

/// The items of one completion answer, each label once.
class Completions {
public:
  void add(const std::string &label, int kind, const std::string &detail,
           const std::string &doc = "") {
    if (!seen_.insert(label).second)
      return;
    json it = {{"label", label}, {"kind", kind}};
    if (!detail.empty())
      it["detail"] = detail;
    if (!doc.empty())
      it["documentation"] = {{"kind", "markdown"}, {"value", doc}};
    items_.push_back(it);
  }
  json answer() const { return {{"isIncomplete", false}, {"items", items_}}; }

private:
  json items_ = json::array();
  std::set<std::string> seen_;
};

/// Where the cursor is, read from the text before it (which need not parse):
/// the words before the innermost unclosed `{`, the open parentheses of the
/// statement, and the statement so far without its comments.
struct TextContext {
  std::vector<std::string> header;
  std::vector<size_t> parens; ///< offsets of the statement's unclosed `(`
  std::string stmt;
  std::string blockWord() const { return header.empty() ? "" : header.front(); }
};

TextContext textContext(const std::string &before) {
  TextContext c;
  std::vector<size_t> opens;
  for (size_t i = 0; i < before.size(); ++i) {
    char ch = before[i];
    if (ch == '/' && i + 1 < before.size() && before[i + 1] == '/') {
      size_t nl = before.find('\n', i);
      i = nl == std::string::npos ? before.size() : nl;
    } else if (ch == '/' && i + 1 < before.size() && before[i + 1] == '*') {
      size_t e = before.find("*/", i + 2);
      i = e == std::string::npos ? before.size() : e + 1;
    } else if (ch == '"') {
      size_t e = before.find('"', i + 1);
      i = e == std::string::npos ? before.size() : e;
    } else if (ch == '{') {
      opens.push_back(i);
    } else if (ch == '}' && !opens.empty()) {
      opens.pop_back();
    } else if (ch == '(') {
      c.parens.push_back(i);
    } else if (ch == ')' && !c.parens.empty()) {
      c.parens.pop_back();
    } else if (ch == ';') {
      c.parens.clear();
    }
  }
  if (!opens.empty()) {
    size_t h = opens.back();
    size_t s = h == 0 ? std::string::npos : before.find_last_of(";{}", h - 1);
    s = s == std::string::npos ? 0 : s + 1;
    static const std::regex word(R"([A-Za-z_][A-Za-z0-9_]*)");
    std::string hd = before.substr(s, h - s);
    for (auto it = std::sregex_iterator(hd.begin(), hd.end(), word); it != std::sregex_iterator();
         ++it)
      c.header.push_back(it->str());
  }
  size_t stmtStart = before.empty() ? std::string::npos : before.find_last_of(";{}");
  c.stmt = before.substr(stmtStart == std::string::npos ? 0 : stmtStart + 1);
  static const std::regex lineComment(R"(//[^\n]*)");
  c.stmt = std::regex_replace(c.stmt, lineComment, "");
  return c;
}

/// `import "...`: the .evo files of the folders imports are searched in.
void importPaths(const std::string &docPath, const std::vector<std::string> &stdlibDirs,
                 Completions &out) {
  frontend::ImportOptions io;
  io.stdlibDirs = stdlibDirs;
  std::vector<std::string> dirs = frontend::importSearchPath(io);
  dirs.insert(dirs.begin(), fs::path(docPath).parent_path().string());
  for (const std::string &dir : dirs) {
    std::error_code ec;
    if (dir.empty() || !fs::is_directory(dir, ec))
      continue;
    for (auto it = fs::recursive_directory_iterator(dir, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
      if (it->path().extension() == ".evo") {
        std::string rel = fs::relative(it->path(), dir, ec).string();
        if (!ec && rel != fs::path(docPath).filename().string())
          out.add(rel, kFile, dir);
      }
  }
}

/// `base.`: the world's readable settings, or the fields and endpoints of
/// the set `base` names (a set, a loop element, an endpoint).
void members(const std::string &base, const Index *ix, Completions &out) {
  if (base == "world") {
    for (const char *k : {"dt", "gravity", "damping", "dashpot", "dim", "steps", "ground"}) {
      const sema::SettingKey *sk = sema::findSettingKey("world", k);
      out.add(k, kProperty, "world setting", sk ? std::string(sk->doc) : "");
    }
    return;
  }
  if (!ix)
    return;
  std::set<std::string> sets;
  if (!ix->find(base, SymbolKind::Set).empty())
    sets.insert(base);
  for (SymbolKind k : {SymbolKind::LoopElement, SymbolKind::Endpoint})
    for (int s : ix->find(base, k))
      sets.insert(ix->symbols[size_t(s)].set);
  for (const Symbol &s : ix->symbols)
    if ((s.kind == SymbolKind::Field || s.kind == SymbolKind::Endpoint) && s.parent >= 0 &&
        sets.count(ix->symbols[size_t(s.parent)].name))
      out.add(s.name, kField, kindWord(s.kind), s.hover);
}

/// In a production: symbols after `port:`, the ports of the part being
/// attached inside its parentheses, parts after `->` and `|`.
void production(const std::string &before, const std::string &head, const TextContext &c,
                const Index &ix, Completions &out) {
  std::string trimmed = head;
  while (!trimmed.empty() && std::isspace(static_cast<unsigned char>(trimmed.back())))
    trimmed.pop_back();
  const char last = trimmed.empty() ? '\0' : trimmed.back();
  if (last == ':') {
    for (const Symbol &s : ix.symbols)
      if (s.kind == SymbolKind::GrammarSymbol)
        out.add(s.name, kEnumMember, "grammar symbol", s.hover);
    out.add("_", kKeyword, "leave the port empty");
  } else if (!c.parens.empty() && (last == '(' || last == ',')) {
    size_t e = c.parens.back();
    while (e > 0 && std::isspace(static_cast<unsigned char>(before[e - 1])))
      --e;
    if (e > 0 && before[e - 1] == '>') { // `part<attach>(`: skip the attach spec
      size_t lt = before.rfind('<', e - 1);
      e = lt == std::string::npos ? e : lt;
    }
    size_t b = e;
    while (b > 0 && isIdentChar(before[b - 1]))
      --b;
    const std::string part = before.substr(b, e - b);
    for (int s : ix.find(part, SymbolKind::Part))
      for (const std::string &port : ix.symbols[size_t(s)].ports)
        out.add(port, kField, "port of part " + part);
  } else {
    for (const Symbol &s : ix.symbols)
      if (s.kind == SymbolKind::Part)
        out.add(s.name, kClass, "part", s.hover);
  }
}

} // namespace

json Server::completion(const json &params) {
  Document &d = document(params);
  const std::string before = d.text.substr(0, size_t(offsetOf(d, params.at("position"))));
  const Index *ix = d.analysis ? &d.analysis->index : nullptr;
  Completions out;
  // The line so far, and it without the word being typed.
  const std::string line =
      before.substr(before.rfind('\n') == std::string::npos ? 0 : before.rfind('\n') + 1);
  size_t w = line.size();
  while (w > 0 && isIdentChar(line[w - 1]))
    --w;
  const std::string head = line.substr(0, w);

  static const std::regex importPath(R"(^\s*import\s+"([^"]*)$)");
  static const std::regex member(R"(([A-Za-z_][A-Za-z0-9_]*)\s*\.\s*$)");
  std::smatch m;
  if (std::regex_search(line, m, importPath)) {
    importPaths(d.path, options_.stdlibDirs, out);
    return out.answer();
  }
  if (std::regex_search(head, m, member)) {
    members(m[1], ix, out);
    return out.answer();
  }
  const TextContext c = textContext(before);
  static const std::regex key(R"(\s*[A-Za-z_0-9]*)");
  const std::string block = c.blockWord();
  if (!block.empty() && !sema::settingKeys(block).empty() && std::regex_match(c.stmt, key)) {
    for (const std::string &k : sema::settingKeys(block))
      out.add(k, kProperty, block + " setting", std::string(sema::findSettingKey(block, k)->doc));
    if (block == "evolve" || block == "train")
      out.add("learn", kKeyword, "the learning block",
              "learn { iterations = ...; optimizer = ...; }");
    return out.answer();
  }
  if (block == "grammar" && ix && c.stmt.find("->") != std::string::npos) {
    production(before, head, c, *ix, out);
    return out.answer();
  }
  // Anywhere else: what the program declares, then the keywords.
  if (ix)
    for (const Symbol &s : ix->symbols)
      if (s.kind != SymbolKind::File && s.kind != SymbolKind::Block && !s.name.empty())
        out.add(s.name, completionKind(s.kind), kindWord(s.kind), s.hover);
  for (const std::string &k : keywords())
    out.add(k, kKeyword, "keyword");
  return out.answer();
}

json Server::formatting(const json &params) {
  Document &d = document(params);
  frontend::FormatResult r = frontend::formatSource(d.text, d.path);
  if (!r.ok)
    throw RpcError{kRequestFailed, r.error};
  json edits = json::array();
  if (r.text != d.text) {
    // One edit replacing the whole text: from the start to past its end.
    int lines = int(std::count(d.text.begin(), d.text.end(), '\n'));
    edits.push_back({{"range",
                      {{"start", {{"line", 0}, {"character", 0}}},
                       {"end", {{"line", lines + 1}, {"character", 0}}}}},
                     {"newText", r.text}});
  }
  return edits;
}

int Server::serve(std::istream &in, std::ostream &out) {
  while (!exited_) {
    Frame f = readFrame(in);
    if (f.kind == Frame::Eof)
      break;
    std::vector<json> replies;
    if (f.kind == Frame::Malformed)
      replies.push_back({{"jsonrpc", "2.0"},
                         {"method", "window/logMessage"},
                         {"params", {{"type", 1}, {"message", "evoc lsp: skipped " + f.error}}}});
    else
      replies = handleText(f.body);
    for (const json &r : replies)
      writeFrame(out, r);
  }
  return shutdown_ && exited_ ? 0 : 1;
}

} // namespace evoc::lsp
