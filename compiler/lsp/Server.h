// `evoc lsp`: a Language Server Protocol server over stdio for .evo files
// (docs/editors.md). JSON-RPC framed as LSP's base protocol says; every
// change of an open document re-checks it with the front end and sema (the
// same diagnostics as `evoc check`), and the Index answers the queries.
#pragma once

#include <iosfwd>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "lsp/Index.h"
#include "sema/Program.h"
#include "support/SourceManager.h"

namespace evoc::lsp {

/// One message read with the base protocol's framing (`Content-Length: N`,
/// a blank line, N bytes of JSON).
struct Frame {
  enum Kind { Message, Eof, Malformed } kind = Eof;
  std::string body;  ///< Message: the JSON text
  std::string error; ///< Malformed: what was wrong with the header
};
Frame readFrame(std::istream &in);
void writeFrame(std::ostream &out, const nlohmann::json &message);

/// file:///a/b%20c.evo <-> /a/b c.evo
std::string uriToPath(const std::string &uri);
std::string pathToUri(const std::string &path);

struct ServerOptions {
  std::vector<std::string> stdlibDirs; ///< `--stdlib DIR`, searched first for imports
};

class Server {
public:
  explicit Server(ServerOptions options = {});

  /// Handles one message (a request, a response or a notification) and
  /// returns what to send back: its response, diagnostics, log messages.
  /// Never throws: a malformed message gets a JSON-RPC error response.
  std::vector<nlohmann::json> handle(const nlohmann::json &message);
  /// handle() for a message's text (a parse error is answered, id null).
  std::vector<nlohmann::json> handleText(const std::string &text);
  /// Serves `in` until `exit` or the end of the stream. Returns the exit
  /// code: 0 after shutdown then exit, 1 otherwise (as the protocol says).
  int serve(std::istream &in, std::ostream &out);
  bool exited() const { return exited_; }

  /// The analysis of one open document (tests).
  struct Analysis {
    std::unique_ptr<SourceManager> sources;
    std::shared_ptr<const sema::CheckedProgram> program;
    Index index;
    int mainFile = -1;
    std::string text; ///< the document's text it was made from
    double milliseconds = 0;
  };
  const Analysis *analysis(const std::string &uri) const;

private:
  struct Document {
    std::string uri, path, text;
    int64_t version = 0;
    /// The latest text that parsed (navigation uses it while the text being
    /// typed does not parse); null until one did.
    std::unique_ptr<Analysis> analysis;
    std::set<std::string> published; ///< URIs this document's diagnostics went to
  };

  nlohmann::json dispatch(const std::string &method, const nlohmann::json &params,
                          std::vector<nlohmann::json> &out);
  void check(Document &doc, std::vector<nlohmann::json> &out);
  Document &document(const nlohmann::json &params);
  int offsetOf(const Document &doc, const nlohmann::json &position) const;

  nlohmann::json hover(const nlohmann::json &params);
  nlohmann::json definition(const nlohmann::json &params);
  nlohmann::json references(const nlohmann::json &params);
  nlohmann::json rename(const nlohmann::json &params);
  nlohmann::json completion(const nlohmann::json &params);
  nlohmann::json documentSymbols(const nlohmann::json &params);
  nlohmann::json formatting(const nlohmann::json &params);

  ServerOptions options_;
  std::map<std::string, Document> docs_;
  bool initialized_ = false, shutdown_ = false, exited_ = false;
};

} // namespace evoc::lsp
