// The language server's protocol (docs/editors.md): initialize, documents
// opened and changed, diagnostics (never stale), hover, definition into the
// stdlib, references, rename, completion, the outline, shutdown; malformed
// messages and every prefix of a real file never crash it.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

#include "lsp/Server.h"

using namespace evoc;
using json = nlohmann::json;

namespace {

std::string readFile(const std::string &path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

const std::string kDir = std::string(EVOC_SOURCE_DIR) + "/examples/";

struct Client {
  lsp::Server server;
  std::vector<json> notifications;
  int next = 1;

  Client() {
    json r = request("initialize", {{"capabilities", json::object()}});
    REQUIRE(r.contains("result"));
    notify("initialized", json::object());
  }
  json request(const std::string &method, const json &params) {
    int id = next++;
    json response;
    for (json &m :
         server.handle({{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", params}})) {
      if (m.contains("id") && m["id"] == id)
        response = m;
      else
        notifications.push_back(m);
    }
    REQUIRE(!response.is_null());
    return response;
  }
  void notify(const std::string &method, const json &params) {
    for (json &m : server.handle({{"jsonrpc", "2.0"}, {"method", method}, {"params", params}}))
      notifications.push_back(m);
  }
  /// The diagnostics last published for `uri` (null if none were).
  json diagnostics(const std::string &uri) const {
    json last;
    for (const json &n : notifications)
      if (n.value("method", "") == "textDocument/publishDiagnostics" && n["params"]["uri"] == uri)
        last = n["params"]["diagnostics"];
    return last;
  }
  void open(const std::string &uri, const std::string &text) {
    notify(
        "textDocument/didOpen",
        {{"textDocument", {{"uri", uri}, {"languageId", "evo"}, {"version", 1}, {"text", text}}}});
  }
  void change(const std::string &uri, const std::string &text, int version) {
    notify("textDocument/didChange", {{"textDocument", {{"uri", uri}, {"version", version}}},
                                      {"contentChanges", json::array({{{"text", text}}})}});
  }
  json at(const std::string &method, const std::string &uri, int line, int ch,
          json extra = json::object()) {
    extra["textDocument"] = {{"uri", uri}};
    extra["position"] = {{"line", line}, {"character", ch}};
    return request(method, extra);
  }
};

// (line, character) of the first `needle` in `text`, plus `skip` characters.
std::pair<int, int> find(const std::string &text, const std::string &needle, int skip = 0) {
  size_t at = text.find(needle);
  REQUIRE(at != std::string::npos);
  int line = 0;
  size_t start = 0;
  for (size_t i = 0; i < at; ++i)
    if (text[i] == '\n')
      ++line, start = i + 1;
  return {line, int(at - start) + skip};
}

std::vector<std::string> labels(const json &completion) {
  std::vector<std::string> out;
  for (const json &i : completion["result"]["items"])
    out.push_back(i["label"]);
  return out;
}

bool has(const std::vector<std::string> &v, const std::string &s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

} // namespace

TEST_CASE("lsp: a broken file gets located diagnostics, and none once fixed", "[lsp]") {
  Client c;
  const std::string uri = lsp::pathToUri(kDir + "eldir_small.evo");
  const std::string good = readFile(kDir + "eldir_small.evo");
  std::string bad = good;
  bad.replace(bad.find("physics = mass_spring_friction;"), 31, "physics = mass_spring_frction;");
  c.open(uri, bad);
  json d = c.diagnostics(uri);
  REQUIRE(d.size() == 1);
  auto [line, ch] = find(bad, "mass_spring_frction");
  CHECK(d[0]["range"]["start"]["line"] == line);
  CHECK(d[0]["range"]["start"]["character"] == ch);
  CHECK(d[0]["severity"] == 1);
  CHECK(d[0]["message"].get<std::string>().find("mass_spring_friction") != std::string::npos);

  c.change(uri, good, 2);
  CHECK(c.diagnostics(uri).empty());
  // A syntax error, then its fix: each version gets its own list.
  std::string typo = good;
  typo.replace(typo.find("steps = 400;"), 12, "steps = 400");
  c.change(uri, typo, 3);
  CHECK(c.diagnostics(uri).size() >= 1);
  c.change(uri, good, 4);
  CHECK(c.diagnostics(uri).empty());
  const lsp::Server::Analysis *a = c.server.analysis(uri);
  REQUIRE(a);
  INFO("re-check took " << a->milliseconds << " ms");
  CHECK(a->milliseconds < 1000); // a generous bound; docs/editors.md has the measured time
}

TEST_CASE("lsp: hover, definition into the stdlib, references and the outline", "[lsp]") {
  Client c;
  const std::string uri = lsp::pathToUri(kDir + "eldir_small.evo");
  const std::string text = readFile(kDir + "eldir_small.evo");
  c.open(uri, text);
  REQUIRE(c.diagnostics(uri).empty());

  // The physics named in world: its hover quotes the stdlib's doc comment,
  // its definition is in stdlib/physics/mass_spring.evo.
  auto [pl, pc] = find(text, "mass_spring_friction", 3);
  json h = c.at("textDocument/hover", uri, pl, pc);
  std::string hv = h["result"]["contents"]["value"];
  CHECK(hv.find("physics `mass_spring_friction`") != std::string::npos);
  CHECK(hv.find("friction") != std::string::npos);
  json def = c.at("textDocument/definition", uri, pl, pc);
  CHECK(def["result"]["uri"].get<std::string>().find("stdlib/physics/mass_spring.evo") !=
        std::string::npos);

  // A setting key: its documentation.
  auto [sl, sc] = find(text, "dt = 0.004", 1);
  hv = c.at("textDocument/hover", uri, sl, sc)["result"]["contents"]["value"];
  CHECK(hv.find("setting `world.dt`") != std::string::npos);

  // An import path goes to the file.
  auto [il, ic] = find(text, "parts/triangle.evo", 2);
  def = c.at("textDocument/definition", uri, il, ic);
  CHECK(def["result"]["uri"].get<std::string>().find("stdlib/parts/triangle.evo") !=
        std::string::npos);

  // The part of the lattice cell: references from this file include it.
  auto [tl, tc] = find(text, "cell = triangle", 8);
  json refs =
      c.at("textDocument/references", uri, tl, tc, {{"context", {{"includeDeclaration", true}}}});
  REQUIRE(refs["result"].size() >= 2);
  CHECK(refs["result"][0]["uri"].get<std::string>().find("triangle.evo") != std::string::npos);

  json outline = c.request("textDocument/documentSymbol", {{"textDocument", {{"uri", uri}}}});
  std::vector<std::string> names;
  for (const json &s : outline["result"])
    names.push_back(s["name"]);
  CHECK(names == std::vector<std::string>{"world", "Grid", "mutation", "evolve"});
}

TEST_CASE("lsp: a physics of its own: field hovers with types, renames, loop elements", "[lsp]") {
  Client c;
  const std::string path = std::string(EVOC_SOURCE_DIR) + "/stdlib/physics/mass_spring.evo";
  const std::string uri = lsp::pathToUri(path);
  const std::string text = readFile(path);
  c.open(uri, text);
  REQUIRE(c.diagnostics(uri).empty());
  // `p.x` in a step: x is a state field of set point.
  auto [l, ch] = find(text, "p.x", 2);
  json h = c.at("textDocument/hover", uri, l, ch);
  std::string hv = h["result"]["contents"]["value"];
  CHECK(hv.find("state field `point.x") != std::string::npos);
  CHECK(hv.find("vec2") != std::string::npos);
  // The loop element p.
  hv = c.at("textDocument/hover", uri, l, ch - 2)["result"]["contents"]["value"];
  CHECK(hv.find("one element of set `point`") != std::string::npos);
  // Fields after `p.`.
  std::string typing = text;
  const size_t at = typing.find("p.x");
  typing.insert(at, "p.");
  c.change(uri, typing, 2);
  auto items = labels(c.at("textDocument/completion", uri, l, ch - 2 + 2));
  CHECK(has(items, "x"));
  CHECK(has(items, "v"));
  c.change(uri, text, 3);

  // Rename a fn declared in this file: every use changes, nothing else.
  auto [fl, fc] = find(text, "fn ", 4);
  json fnHover = c.at("textDocument/hover", uri, fl, fc);
  REQUIRE(fnHover["result"].is_object());
  json edit = c.at("textDocument/rename", uri, fl, fc, {{"newName", "renamed_fn"}});
  REQUIRE(edit.contains("result"));
  const json &changes = edit["result"]["changes"][uri];
  REQUIRE(changes.size() >= 2); // its declaration and at least one call
  for (const json &e : changes)
    CHECK(e["newText"] == "renamed_fn");
  json badName = c.at("textDocument/rename", uri, fl, fc, {{"newName", "2x"}});
  CHECK(badName.contains("error"));
}

TEST_CASE("lsp: completion of setting keys, parts, ports, symbols and import paths", "[lsp]") {
  Client c;
  const std::string uri = lsp::pathToUri(kDir + "grammar_walker.evo");
  const std::string text = readFile(kDir + "grammar_walker.evo");
  c.open(uri, text);
  REQUIRE(c.diagnostics(uri).empty());

  // A key being typed in the world block.
  std::string t = text;
  size_t w = t.find("world {") + 7;
  t.insert(w, "\n  gra");
  c.change(uri, t, 2);
  auto [kl, kc] = find(t, "  gra", 5);
  auto items = labels(c.at("textDocument/completion", uri, kl, kc));
  CHECK(has(items, "gravity"));
  CHECK(has(items, "physics"));
  CHECK(!has(items, "population"));
  json first = c.at("textDocument/completion", uri, kl, kc)["result"]["items"][0];
  CHECK(first.contains("documentation"));

  // An import path.
  t = "import \"par\n" + text;
  c.change(uri, t, 3);
  items = labels(c.at("textDocument/completion", uri, 0, 11));
  CHECK(has(items, "parts/triangle.evo"));
  CHECK(has(items, "physics/mass_spring.evo"));

  // In a production: parts after ->, a part's ports inside its parentheses,
  // symbols after `port:`. grammar_walker.evo's grammar is in the stdlib:
  // write one here.
  t = text + "\ngrammar mine {\n  start = Trunk;\n  Trunk -> block(top: Trunk) | \n}\n";
  c.change(uri, t, 4);
  auto [gl, gc] = find(t, "| \n}", 2);
  items = labels(c.at("textDocument/completion", uri, gl, gc));
  CHECK(has(items, "block"));
  CHECK(has(items, "segment"));
  auto [ql, qc] = find(t, "block(top: ", 6);
  items = labels(c.at("textDocument/completion", uri, ql, qc));
  CHECK(has(items, "bottom"));
  CHECK(has(items, "left"));
  items = labels(c.at("textDocument/completion", uri, ql, qc + 5));
  CHECK(has(items, "Trunk"));
}

TEST_CASE("lsp: malformed messages and requests out of order get errors, not crashes", "[lsp]") {
  lsp::Server s;
  auto one = [&](const std::string &text) {
    std::vector<json> r = s.handleText(text);
    REQUIRE(r.size() == 1);
    return r[0];
  };
  CHECK(one("{not json")["error"]["code"] == -32700);
  CHECK(one(R"({"jsonrpc":"2.0","id":1,"method":"textDocument/hover","params":{}})")["error"]
                                                                                    ["code"] ==
        -32002); // before initialize
  CHECK(one(R"({"jsonrpc":"2.0","id":2,"method":"initialize","params":{}})").contains("result"));
  CHECK(one(R"([1, 2])")["error"]["code"] == -32600);
  CHECK(one(R"({"jsonrpc":"2.0","id":3,"method":"textDocument/hover","params":{}})")["error"]
                                                                                    ["code"] ==
        -32602);
  CHECK(one(R"({"jsonrpc":"2.0","id":4,"method":"textDocument/hover","params":
      {"textDocument":{"uri":"file:///nowhere.evo"},"position":{"line":0,"character":0}}})")
            ["error"]["code"] == -32602);
  CHECK(one(R"({"jsonrpc":"2.0","id":5,"method":"no/such","params":{}})")["error"]["code"] ==
        -32601);
  CHECK(s.handleText(R"({"jsonrpc":"2.0","method":"no/such/notification"})").empty());

  // Framing: a missing or absurd Content-Length is skipped, the stream goes on.
  std::istringstream in("Content-Type: x\r\n\r\nContent-Length: abc\r\n\r\n"
                        "Content-Length: 2\r\n\r\n{}");
  CHECK(lsp::readFrame(in).kind == lsp::Frame::Malformed);
  CHECK(lsp::readFrame(in).kind == lsp::Frame::Malformed);
  lsp::Frame f = lsp::readFrame(in);
  CHECK(f.kind == lsp::Frame::Message);
  CHECK(f.body == "{}");
  CHECK(lsp::readFrame(in).kind == lsp::Frame::Eof);
  std::istringstream cut("Content-Length: 100\r\n\r\n{\"a\"");
  CHECK(lsp::readFrame(cut).kind == lsp::Frame::Eof);
}

TEST_CASE("lsp: serve() answers framed messages and exits 0 after shutdown, 1 without", "[lsp]") {
  auto framed = [](const json &m) {
    std::string b = m.dump();
    return "Content-Length: " + std::to_string(b.size()) + "\r\n\r\n" + b;
  };
  std::string input = framed({{"jsonrpc", "2.0"}, {"id", 1}, {"method", "initialize"}}) +
                      "garbage header\r\n\r\n" +
                      framed({{"jsonrpc", "2.0"}, {"id", 2}, {"method", "shutdown"}}) +
                      framed({{"jsonrpc", "2.0"}, {"method", "exit"}});
  std::istringstream in(input);
  std::ostringstream out;
  lsp::Server s;
  CHECK(s.serve(in, out) == 0);
  CHECK(out.str().find("\"capabilities\"") != std::string::npos);
  CHECK(out.str().find("skipped a message without a Content-Length") != std::string::npos);
  std::istringstream noShutdown(framed({{"jsonrpc", "2.0"}, {"method", "exit"}}));
  lsp::Server s2;
  CHECK(s2.serve(noShutdown, out) == 1);
}

TEST_CASE("lsp: every prefix of a real file, as if typed: diagnostics each time, no crash",
          "[lsp][fuzz]") {
  Client c;
  const std::string path = kDir + "grammar_walker.evo";
  const std::string uri = lsp::pathToUri(path);
  const std::string text = readFile(path);
  c.open(uri, "");
  int version = 2;
  for (size_t n = 0; n <= text.size(); n += 7) {
    const std::string prefix = text.substr(0, n);
    c.notifications.clear();
    c.change(uri, prefix, version++);
    REQUIRE(c.diagnostics(uri).is_array());
    // Queries at the end of the text typed so far answer (possibly null).
    int line = int(std::count(prefix.begin(), prefix.end(), '\n'));
    int ch =
        int(prefix.size() - (prefix.rfind('\n') == std::string::npos ? 0 : prefix.rfind('\n') + 1));
    CHECK(c.at("textDocument/hover", uri, line, ch).contains("result"));
    CHECK(c.at("textDocument/completion", uri, line, ch).contains("result"));
    CHECK(c.at("textDocument/definition", uri, line, ch).contains("result"));
  }
  c.change(uri, text, version++);
  CHECK(c.diagnostics(uri).empty());
  c.notify("textDocument/didClose", {{"textDocument", {{"uri", uri}}}});
  CHECK(c.server.analysis(uri) == nullptr);
}

TEST_CASE("lsp: formatting is evoc fmt's layout, one edit; a broken file is refused", "[lsp]") {
  Client c;
  const std::string uri = lsp::pathToUri(kDir + "eldir_small.evo");
  const std::string text = readFile(kDir + "eldir_small.evo");
  std::string ugly = text;
  ugly.replace(ugly.find("  dt = 0.004;"), 13, "dt=0.004 ;");
  c.open(uri, ugly);
  json r = c.request("textDocument/formatting",
                     {{"textDocument", {{"uri", uri}}}, {"options", {{"tabSize", 2}}}});
  REQUIRE(r["result"].size() == 1);
  CHECK(r["result"][0]["newText"] == text);
  c.change(uri, text, 2);
  r = c.request("textDocument/formatting", {{"textDocument", {{"uri", uri}}}});
  CHECK(r["result"].empty()); // already formatted
  c.change(uri, "world { dim = ; }\n", 3);
  r = c.request("textDocument/formatting", {{"textDocument", {{"uri", uri}}}});
  CHECK(r.contains("error"));
}
