// Mutations of run-directory files for the reader's fuzz test.
#include "RunDirMutator.h"

#include "evolve/record/RunDir.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <fstream>
#include <limits>
#include <vector>

namespace evoc::evolve::test {

namespace fs = std::filesystem;
using json = nlohmann::json;

RunFiles RunFiles::read(const fs::path &dir) {
  RunFiles f;
  f.state = readTextFile(dir / "state.json");
  f.log = readTextFile(dir / "log.jsonl");
  f.run = readTextFile(dir / "run.json");
  return f;
}

void RunFiles::write(const fs::path &dir) const {
  auto put = [&](const char *name, bool present, const std::string &text) {
    std::error_code ec;
    fs::remove(dir / name, ec);
    if (present)
      std::ofstream(dir / name, std::ios::binary) << text;
  };
  put("state.json", hasState, state);
  put("log.jsonl", hasLog, log);
  put("run.json", hasRun, run);
}

std::string RunFiles::describe() const {
  auto cut = [](const std::string &s) { return s.size() > 4000 ? s.substr(0, 4000) + "..." : s; };
  return "state.json" + std::string(hasState ? ":\n" + cut(state) : " absent") + "\nlog.jsonl" +
         std::string(hasLog ? ":\n" + cut(log) : " absent") + "\nrun.json" +
         std::string(hasRun ? ":\n" + cut(run) : " absent");
}

namespace {

const char *const kTokens[] = {"null",
                               "true",
                               "false",
                               "-1",
                               "0",
                               "1",
                               "-0",
                               "0.5",
                               "1e308",
                               "-1e308",
                               "1e400",
                               "4294967296",
                               "9223372036854775807",
                               "-9223372036854775808",
                               "18446744073709551616",
                               "\"\"",
                               "\"x\"",
                               "[]",
                               "{}",
                               "[[]]",
                               ",",
                               ":",
                               "[",
                               "]",
                               "{",
                               "}",
                               "\"",
                               "\\",
                               "\\u0000",
                               "\\ud800",
                               "NaN",
                               "\n",
                               "\"generation\"",
                               "\"population\"",
                               "\"genome\"",
                               "\"archive\"",
                               "\"best\"",
                               "\"id\"",
                               "\"format\"",
                               "\"version\"",
                               "\"evoc-run\"",
                               "\"evoc-run-state\""};

/// A value of a random type, often an extreme one.
json randomValue(std::mt19937_64 &rng) {
  switch (rng() % 22) {
  case 0:
    return nullptr;
  case 1:
    return bool(rng() % 2);
  case 2:
    return 0;
  case 3:
    return -1;
  case 4:
    return int64_t(rng() % 10);
  case 5:
    return std::numeric_limits<int64_t>::max();
  case 6:
    return std::numeric_limits<int64_t>::min();
  case 7:
    return std::numeric_limits<uint64_t>::max();
  case 8:
    return int64_t(1) << 31;
  case 9:
    return 0.5;
  case 10:
    return 1e308;
  case 11:
    return -1e-320;
  case 12:
    return "";
  case 13:
    return "x";
  case 14:
    return std::string(64, "0123456789abcdef"[rng() % 16]);
  case 15:
    return json::array();
  case 16:
    return json::object();
  case 17:
    return json::array({1, 2});
  case 18:
    return json::array({"k", 1, nullptr, "r"});
  case 19:
    return json{{"a", 1}};
  case 20:
    return double(int64_t(rng() % 2000000) - 1000000);
  default:
    return std::string(size_t(rng() % 200), 'z');
  }
}

/// Every node of `j` (the root included), as pointers to them.
void nodes(json &j, std::vector<json *> &out) {
  out.push_back(&j);
  if (j.is_object() || j.is_array())
    for (auto &c : j)
      nodes(c, out);
}

/// One edit of the JSON tree.
void mutateJson(json &root, std::mt19937_64 &rng) {
  std::vector<json *> all;
  nodes(root, all);
  json &n = *all[size_t(rng() % all.size())];
  switch (rng() % 9) {
  case 0:
  case 1:
    n = randomValue(rng);
    return;
  case 2: // drop a member
    if (n.is_object() && !n.empty()) {
      auto it = n.begin();
      std::advance(it, long(rng() % n.size()));
      n.erase(it);
    } else if (n.is_array() && !n.empty()) {
      n.erase(n.begin() + long(rng() % n.size()));
    }
    return;
  case 3: // duplicate an array entry, or add a member
    if (n.is_array() && !n.empty())
      n.push_back(n[size_t(rng() % n.size())]);
    else if (n.is_object())
      n["fuzz"] = randomValue(rng);
    return;
  case 4: // swap two array entries
    if (n.is_array() && n.size() > 1)
      std::swap(n[size_t(rng() % n.size())], n[size_t(rng() % n.size())]);
    return;
  case 5: // nudge a number
    if (n.is_number_integer())
      n = n.get<int64_t>() + (rng() % 2 ? 1 : -1);
    else if (n.is_number())
      n = -n.get<double>() * 1e10;
    else
      n = randomValue(rng);
    return;
  case 6: // a string of another length
    if (n.is_string())
      n = n.get<std::string>().substr(0, size_t(rng() % (n.get<std::string>().size() + 1)));
    else
      n = randomValue(rng);
    return;
  case 7: // empty a container
    if (n.is_array())
      n = json::array();
    else if (n.is_object())
      n = json::object();
    return;
  default: // move a subtree elsewhere
    *all[size_t(rng() % all.size())] = json(n);
    return;
  }
}

void mutateBytes(std::string &s, std::mt19937_64 &rng) {
  auto pick = [&](size_t n) { return n == 0 ? size_t(0) : size_t(rng() % n); };
  switch (rng() % 6) {
  case 0: // byte flip
    if (!s.empty())
      s[pick(s.size())] = rng() % 4 == 0 ? char(rng() % 256) : char(32 + rng() % 95);
    return;
  case 1: { // delete a range
    size_t at = pick(s.size() + 1);
    s.erase(at, pick(std::min<size_t>(s.size() - at, 64) + 1));
    return;
  }
  case 2: { // duplicate a range
    size_t at = pick(s.size() + 1);
    s.insert(at, s.substr(at, pick(64)));
    return;
  }
  case 3: // truncate
    s.resize(pick(s.size() + 1));
    return;
  default: // insert a token
    s.insert(pick(s.size() + 1), kTokens[pick(sizeof kTokens / sizeof *kTokens)]);
    return;
  }
}

std::vector<std::string> splitLines(const std::string &s) {
  std::vector<std::string> out;
  size_t at = 0;
  for (size_t nl; (nl = s.find('\n', at)) != std::string::npos; at = nl + 1)
    out.push_back(s.substr(at, nl - at));
  if (at < s.size())
    out.push_back(s.substr(at));
  return out;
}

void mutateLog(std::string &log, std::mt19937_64 &rng) {
  std::vector<std::string> lines = splitLines(log);
  auto pick = [&](size_t n) { return n == 0 ? size_t(0) : size_t(rng() % n); };
  switch (rng() % 5) {
  case 0:
    if (!lines.empty())
      lines.erase(lines.begin() + long(pick(lines.size())));
    break;
  case 1:
    if (!lines.empty())
      lines.insert(lines.begin() + long(pick(lines.size())), lines[pick(lines.size())]);
    break;
  case 2:
    if (lines.size() > 1)
      std::swap(lines[pick(lines.size())], lines[pick(lines.size())]);
    break;
  default: { // edit one line's JSON
    if (lines.empty())
      break;
    std::string &l = lines[pick(lines.size())];
    json j = json::parse(l, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) {
      mutateBytes(l, rng);
    } else {
      mutateJson(j, rng);
      l = j.dump();
    }
    break;
  }
  }
  log.clear();
  for (const auto &l : lines)
    log += l + "\n";
}

} // namespace

RunFiles mutateRunFiles(const RunFiles &f, std::mt19937_64 &rng) {
  RunFiles out = f;
  int rounds = 1 + int(rng() % 4);
  for (int r = 0; r < rounds; ++r) {
    unsigned which = unsigned(rng() % 20); // state 12, log 5, run 3
    std::string &text = which < 12 ? out.state : which < 17 ? out.log : out.run;
    bool &present = which < 12 ? out.hasState : which < 17 ? out.hasLog : out.hasRun;
    if (rng() % 50 == 0) {
      present = false;
      continue;
    }
    if (which >= 12 && which < 17 && rng() % 2) {
      mutateLog(text, rng);
      continue;
    }
    json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (!j.is_discarded() && rng() % 4 != 0) {
      mutateJson(j, rng);
      text = j.dump();
    } else {
      mutateBytes(text, rng);
    }
  }
  return out;
}

} // namespace evoc::evolve::test
