// ROBOTS.json / PARAMS.json readers with precise errors; OUT.json writer.
#include "core/JsonIO.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include <fcntl.h>
#include <unistd.h>

#include <fmt/format.h>

#include "core/Train.h"
#include "support/Error.h"

namespace evoc::runtime {

using nlohmann::json;

namespace {

// NaN, Infinity and -Infinity (what Python's json module writes) are not
// JSON. They are replaced, outside strings and at the same length, by the
// strings "N" / "I" / "-I", so the reader can say which number is not finite;
// numbers that overflow a double become "O" / "-O" the same way.
std::string markNonFinite(const std::string &text) {
  std::string s = text;
  bool inString = false;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (inString) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        inString = false;
      continue;
    }
    if (c == '"') {
      inString = true;
    } else if (std::isdigit((unsigned char)c) ||
               (c == '-' && i + 1 < s.size() && std::isdigit((unsigned char)s[i + 1]))) {
      // A number too large for a double ("1e400") becomes "O" / "-O", so
      // the reader names the robot and point that holds it.
      size_t end = i + 1;
      while (end < s.size() && std::strchr("0123456789.eE+-", s[end]))
        ++end;
      if (end - i >= 4) { // the shortest overflow, 1e309, has 5 characters
        std::string lit = s.substr(i, end - i);
        errno = 0;
        double d = std::strtod(lit.c_str(), nullptr);
        if (errno == ERANGE && std::isinf(d)) {
          std::string mark = c == '-' ? "\"-O\"" : "\"O\"";
          s.replace(i, end - i, mark + std::string(lit.size() - mark.size(), ' '));
        }
      }
      i = end - 1;
    } else if (s.compare(i, 3, "NaN") == 0) {
      s.replace(i, 3, "\"N\"");
      i += 2;
    } else if (s.compare(i, 9, "-Infinity") == 0) {
      s.replace(i, 9, "\"-I\"     ");
      i += 8;
    } else if (s.compare(i, 8, "Infinity") == 0) {
      s.replace(i, 8, "\"I\"     ");
      i += 7;
    }
  }
  return s;
}

json parseJson(const std::string &text, const std::string &source) {
  try {
    return json::parse(markNonFinite(text));
  } catch (const json::parse_error &e) {
    size_t line = 1, col = 1, end = std::min<size_t>(e.byte == 0 ? 0 : e.byte - 1, text.size());
    for (size_t i = 0; i < end; ++i)
      text[i] == '\n' ? (++line, col = 1) : ++col;
    std::string what = e.what();
    auto pos = what.find("syntax error");
    if (pos != std::string::npos)
      what = what.substr(pos);
    throw Error(fmt::format("{}:{}:{}: the file is not valid JSON ({})", source, line, col, what));
  } catch (const json::exception &e) {
    throw Error(fmt::format("{}: the file is not valid JSON ({})", source, e.what()));
  }
}

std::string typeName(const json &v) { return v.is_null() ? "null" : v.type_name(); }

double number(const json &v, const std::string &where) {
  if (v.is_number()) {
    double d = v.get<double>();
    if (!std::isfinite(d))
      throw Error(where + " is infinite; give a finite number");
    return d;
  }
  if (v.is_string()) {
    auto s = v.get<std::string>();
    if (s == "N")
      throw Error(where + " is NaN; give a finite number");
    if (s == "I" || s == "-I")
      throw Error(where + " is infinite; give a finite number");
    if (s == "O" || s == "-O")
      throw Error(where + " is too large for a double (beyond 1.8e308); give a finite number");
    throw Error(where + " is a string (\"" + s + "\"), expected a number");
  }
  if (v.is_null())
    throw Error(where + " is null (a NaN written by a JSON encoder?); give a finite number");
  throw Error(where + " is " + typeName(v) + ", expected a number");
}

const json &member(const json &obj, const char *key, const std::string &where) {
  if (!obj.is_object())
    throw Error(where + " is " + typeName(obj) + ", expected an object");
  auto it = obj.find(key);
  if (it == obj.end())
    throw Error(fmt::format("{} has no \"{}\"", where, key));
  return *it;
}

const json &array(const json &v, const std::string &where) {
  if (!v.is_array())
    throw Error(where + " is " + typeName(v) + ", expected an array");
  return v;
}

std::string readText(const std::string &path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw Error("cannot read '" + path + "': it is a directory; give the path of a JSON file");
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw Error("cannot read '" + path + "': no such file or not readable");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

const char *coordName(int c) { return c == 0 ? "x" : c == 1 ? "y" : c == 2 ? "z" : "?"; }

// A nested array of numbers -> shape + row-major data; rows must agree.
void flatten(const json &v, const std::string &where, size_t depth, ParamTensor &t) {
  if (!v.is_array()) {
    t.data.push_back(number(v, where));
    return;
  }
  if (t.shape.size() <= depth)
    throw Error(where + " is nested deeper than its first entry");
  if (int64_t(v.size()) != t.shape[depth])
    throw Error(fmt::format("{} has {} entries, but the first row at this level has {}; every "
                            "row must have the same length",
                            where, v.size(), t.shape[depth]));
  for (size_t i = 0; i < v.size(); ++i)
    flatten(v[i], fmt::format("{}[{}]", where, i), depth + 1, t);
}

// One robot entry ({"points", "springs"}); `at` names it in errors.
Robot robotFromJson(const json &entry, const std::string &at, int dim) {
  const json &pts = array(member(entry, "points", at), at + ", \"points\"");
  const json &spr = array(member(entry, "springs", at), at + ", \"springs\"");
  Robot R;
  if (pts.empty())
    throw Error(at + " has no points; a robot needs at least one point");
  R.dim = dim > 0 ? dim : pts[0].is_array() ? int(pts[0].size()) : 2;
  if (R.dim != 2 && R.dim != 3)
    throw Error(
        fmt::format("{}, point 0 has {} coordinates; points are [x, y] or [x, y, z]", at, R.dim));
  for (size_t i = 0; i < pts.size(); ++i) {
    std::string where = fmt::format("{}, point {}", at, i);
    const json &p = array(pts[i], where);
    if (int(p.size()) != R.dim)
      throw Error(fmt::format("{} has {} coordinates, expected {} ({})", where, p.size(), R.dim,
                              dim > 0 ? fmt::format("the experiment is {}D", dim)
                                      : "like the robot's first point"));
    for (int c = 0; c < R.dim; ++c)
      R.points.push_back(number(p[c], fmt::format("{}, coordinate {}", where, coordName(c))));
  }
  const int np = R.numPoints();
  static const char *cols[] = {"a", "b", "rest", "stiffness", "actuation"};
  for (size_t i = 0; i < spr.size(); ++i) {
    std::string where = fmt::format("{}, spring {}", at, i);
    const json &s = array(spr[i], where);
    if (s.size() != 5)
      throw Error(fmt::format("{} has {} entries, expected 5: [a, b, rest, stiffness, "
                              "actuation]",
                              where, s.size()));
    double v[5];
    for (int c = 0; c < 5; ++c)
      v[c] = number(s[c], fmt::format("{}, {}", where, cols[c]));
    int ab[2];
    for (int c = 0; c < 2; ++c) {
      if (v[c] != std::floor(v[c]))
        throw Error(fmt::format("{}, endpoint {} = {} is not an integer point index", where,
                                cols[c], v[c]));
      if (v[c] < 0 || v[c] >= np)
        throw Error(fmt::format("{}, endpoint {} = {} is out of range: the robot has {} points "
                                "(indices 0 to {})",
                                where, cols[c], v[c], np, np - 1));
      ab[c] = int(v[c]);
    }
    if (ab[0] == ab[1])
      throw Error(fmt::format("{} connects point {} to itself", where, ab[0]));
    if (v[2] <= 0)
      throw Error(fmt::format("{}, rest length is {}; it must be positive", where, v[2]));
    if (v[3] < 0)
      throw Error(fmt::format("{}, stiffness is {}; it must not be negative", where, v[3]));
    R.springs.push_back({ab[0], ab[1], v[2], v[3], v[4]});
  }
  if (entry.contains("actuators")) { // a particle body's actuator per point
    const json &acts = array(entry["actuators"], at + ", \"actuators\"");
    if (int(acts.size()) != np)
      throw Error(fmt::format("{}, \"actuators\" has {} entries, but the robot has {} points "
                              "(one actuator id per point, -1 for a passive one)",
                              at, acts.size(), np));
    for (size_t i = 0; i < acts.size(); ++i) {
      double a = number(acts[i], fmt::format("{}, actuator of point {}", at, i));
      if (a != std::floor(a) || a < -1 || a > 1e6)
        throw Error(fmt::format("{}, actuator of point {} is {}; it is -1 (passive) or a whole "
                                "number from 0 to 1000000",
                                at, i, a));
      R.actuators.push_back(int(a));
    }
  }
  return R;
}

// One PARAMS.json entry (an object of tensors); `at` names it in errors.
ParamSet paramSetFromJson(const json &entry, const std::string &at) {
  if (!entry.is_object())
    throw Error(at + " is " + typeName(entry) + ", expected an object of parameter arrays");
  ParamSet ps;
  for (const auto &[key, v] : entry.items()) {
    ParamTensor t;
    for (const json *p = &v; p->is_array(); p = &(*p)[0]) { // shape from first entries
      t.shape.push_back(int64_t(p->size()));
      if (p->empty())
        break;
    }
    flatten(v, fmt::format("{}, field '{}'", at, key), 0, t);
    ps[key] = std::move(t);
  }
  return ps;
}

} // namespace

std::vector<Robot> parseRobotsJson(const std::string &text, const std::string &source, int dim) {
  json doc = parseJson(text, source);
  const json &list = array(member(doc, "robots", source), source + ": \"robots\"");
  std::vector<Robot> robots;
  for (size_t r = 0; r < list.size(); ++r)
    robots.push_back(robotFromJson(list[r], fmt::format("{}: robot {}", source, r), dim));
  return robots;
}

RobotsInput parseRobotsInput(const std::string &text, const std::string &source, int dim,
                             const std::function<Robot(const json &)> &express) {
  json doc = parseJson(text, source);
  RobotsInput in;
  if (doc.is_object() && doc.contains("robots")) {
    in.kind = "robots";
    in.robots = parseRobotsJson(text, source, dim);
    return in;
  }
  if (doc.is_object() && doc.contains("points") && doc.contains("springs")) {
    // One robot: a run's best.json (with the weights it was trained to) or
    // evoc train's robot.json.
    in.kind = "robot";
    in.robots.push_back(robotFromJson(doc, source, dim));
    if (doc.contains("params") && !doc["params"].is_null())
      in.params = std::vector<ParamSet>{paramSetFromJson(doc["params"], source + ": \"params\"")};
    return in;
  }
  if (doc.is_object() && doc.contains("population")) {
    // A generation's population.json: its members in rank order; those
    // beyond the phenotype limit have only their genome (docs/evolution.md).
    in.kind = "population";
    const json &pop = array(doc["population"], source + ": \"population\"");
    for (size_t i = 0; i < pop.size(); ++i) {
      std::string at = fmt::format("{}: population member {}", source, i);
      const json &m = pop[i];
      if (m.is_object() && m.contains("robot")) {
        in.robots.push_back(robotFromJson(m["robot"], at + ", \"robot\"", dim));
      } else if (m.is_object() && m.contains("genome") && express) {
        try {
          in.robots.push_back(express(m["genome"]));
        } catch (const std::exception &e) { // evoc::Error, or a genome's JSON of the wrong shape
          throw Error(
              fmt::format("{}: its genome does not fit this experiment's body: {}", at, e.what()));
        }
      } else {
        throw Error(fmt::format("{} has no \"robot\" (population.json writes the robots of "
                                "the best members only) and this experiment has no body to "
                                "express its \"genome\" with; give the .evo file of the run",
                                at));
      }
    }
    if (in.robots.empty())
      throw Error(source + ": \"population\" is empty");
    return in;
  }
  throw Error(fmt::format("{} holds no robots: expected ROBOTS.json ({{\"robots\": [...]}}), one "
                          "robot ({{\"points\", \"springs\"}}: a run's best.json) or a "
                          "generation's population.json ({{\"population\": [...]}})",
                          source));
}

RobotsInput readRobotsInput(const std::string &path, int dim,
                            const std::function<Robot(const json &)> &express) {
  return parseRobotsInput(readText(path), path, dim, express);
}

std::vector<Robot> readRobotsFile(const std::string &path, int dim) {
  return parseRobotsJson(readText(path), path, dim);
}

std::vector<ParamSet> parseParamsJson(const std::string &text, const std::string &source) {
  json doc = parseJson(text, source);
  const json &list = array(member(doc, "params", source), source + ": \"params\"");
  std::vector<ParamSet> out;
  for (size_t r = 0; r < list.size(); ++r)
    out.push_back(paramSetFromJson(list[r], fmt::format("{}: robot {}", source, r)));
  return out;
}

std::vector<ParamSet> readParamsFile(const std::string &path) {
  return parseParamsJson(readText(path), path);
}

nlohmann::json tensorToJson(const ParamTensor &t) {
  if (t.shape.empty())
    return t.data.empty() ? json(nullptr) : json(t.data[0]);
  size_t i = 0;
  auto build = [&](auto &&self, size_t depth) -> json {
    json a = json::array();
    for (int64_t k = 0; k < t.shape[depth]; ++k)
      a.push_back(depth + 1 == t.shape.size() ? json(t.data[i++]) : self(self, depth + 1));
    return a;
  };
  return build(build, 0);
}

nlohmann::json paramSetToJson(const ParamSet &p) {
  json o = json::object();
  for (const auto &[k, t] : p)
    o[k] = tensorToJson(t);
  return o;
}

nlohmann::json simResultToJson(const SimResult &r) {
  json results = json::array();
  for (const auto &t : r.results) {
    json e = {{"loss", t.valid ? json(t.loss) : json(nullptr)},
              {"grad", paramSetToJson(t.grad)},
              {"losses", t.losses},
              {"valid", t.valid}};
    if (!t.valid)
      e["error"] = t.error;
    results.push_back(std::move(e));
  }
  return {{"results", results},
          {"seconds", r.seconds},
          {"robot_steps_per_second", r.robotStepsPerSecond}};
}

void writeJsonFile(const std::string &path, const nlohmann::json &j) {
  std::string text = j.dump() + "\n";
  std::string tmp = path + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0)
    throw Error("cannot write '" + path + "': the folder does not exist or is not writable");
  size_t done = 0;
  while (done < text.size()) {
    ssize_t w = ::write(fd, text.data() + done, text.size() - done);
    if (w <= 0) {
      ::close(fd);
      ::unlink(tmp.c_str());
      throw Error("cannot write '" + path + "': the disk is full or the file is not writable");
    }
    done += size_t(w);
  }
  ::fsync(fd);
  ::close(fd);
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    ::unlink(tmp.c_str());
    throw Error("cannot move the finished file into place at '" + path + "'");
  }
}

} // namespace evoc::runtime
