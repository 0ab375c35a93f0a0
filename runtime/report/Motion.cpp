// Sampled gaits: which steps to keep and how the page stores them compactly.
#include "report/Report.h"

#include "evolve/record/Svg.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace evoc::report {

std::vector<int64_t> sampleTimes(int64_t steps, int maxFrames) {
  std::vector<int64_t> t;
  const int64_t last = std::max<int64_t>(0, steps - 1);
  const int64_t n = std::max(2, maxFrames);
  const int64_t k = std::max<int64_t>(1, (last + n - 2) / (n - 1));
  for (int64_t s = 0; s < last; s += k)
    t.push_back(s);
  t.push_back(last);
  return t;
}

nlohmann::json motionJson(const Motion &m) {
  using nlohmann::json;
  json springs = json::array();
  for (const auto &s : m.robot.springs)
    springs.push_back(
        {s.a, s.b, std::round(s.rest * 1e5) / 1e5, std::round(s.actuation * 1e4) / 1e4});
  // A row of coordinates in units of 1e-4 (a non-finite one as 0).
  auto fixed4 = [](const std::vector<double> &values) {
    json row = json::array();
    for (double v : values)
      row.push_back(std::isfinite(v) ? int64_t(std::lround(v * 1e4)) : 0);
    return row;
  };
  json frames = json::array();
  for (const auto &f : m.frames)
    frames.push_back(fixed4(f));
  json j = {{"label", m.label}, {"dim", m.robot.dim}, {"springs", springs},
            {"t", m.times},     {"scale", 1e4},       {"f", frames}};
  // A particle body's actuator per point (-1 passive): the page colours
  // each particle by its actuator's output.
  if (!m.robot.actuators.empty())
    j["actuators"] = m.robot.actuators;
  // The parts, each a polygon of point indices with its kind, and the
  // kinds' names and colours (as in best.svg).
  if (!m.outlines.empty()) {
    const auto colours = evolve::partColours(m.outlines);
    json names = json::array(), fills = json::array(), cells = json::array();
    std::map<std::string, int> index;
    for (const auto &[name, colour] : colours) {
      index[name] = int(names.size());
      names.push_back(name);
      fills.push_back(colour);
    }
    for (const auto &o : m.outlines) {
      json cell = json::array({index.at(o.part)});
      for (int p : o.points)
        cell.push_back(p);
      cells.push_back(std::move(cell));
    }
    j["parts"] = {{"names", names}, {"colours", fills}, {"cells", cells}};
  }
  // The objects' centres, as the frames, when known for every frame.
  if (!m.objects.empty() && m.objects.size() == m.frames.size()) {
    json objs = json::array();
    for (const auto &o : m.objects)
      objs.push_back(fixed4(o));
    j["o"] = std::move(objs);
  }
  // The controller's outputs, to 1e-3, when known for every frame.
  if (!m.outputs.empty() && m.outputs.size() == m.frames.size()) {
    json outs = json::array();
    for (const auto &o : m.outputs) {
      json row = json::array();
      for (double v : o)
        row.push_back(std::isfinite(v) ? int64_t(std::lround(std::clamp(v, -1.0, 1.0) * 1e3)) : 0);
      outs.push_back(std::move(row));
    }
    j["a"] = std::move(outs);
  }
  return j;
}

std::string runName(const std::filesystem::path &dir) {
  std::filesystem::path p = std::filesystem::absolute(dir).lexically_normal();
  if (p.filename().empty())
    p = p.parent_path();
  return p.filename().string();
}

nlohmann::json worldJson(const World &w) {
  nlohmann::json profile = nlohmann::json::array();
  for (const auto &[x, h] : w.terrain.profile)
    profile.push_back({x, h});
  nlohmann::json j = {{"dim", w.dim},       {"up", w.upAxis},   {"ground_y", w.groundY},
                      {"profile", profile}, {"steps", w.steps}, {"dt", w.dt}};
  if (!w.terrain.field.empty()) // a 3D height field: grid lines and heights h[j * nx + i]
    j["field"] = {{"xs", w.terrain.field.xs}, {"ys", w.terrain.field.ys}, {"h", w.terrain.field.h}};
  if (!w.terrain.boxes.empty()) { // the scene: each box's low corner, then its high corner
    nlohmann::json boxes = nlohmann::json::array();
    for (const SceneBox &b : w.terrain.boxes)
      boxes.push_back({std::vector<double>(b.lo.begin(), b.lo.begin() + w.dim),
                       std::vector<double>(b.hi.begin(), b.hi.begin() + w.dim)});
    j["boxes"] = std::move(boxes);
  }
  if (!w.terrain.objects.empty()) { // each object's start: low corner, high corner
    nlohmann::json objects = nlohmann::json::array();
    for (const WorldObject &o : w.terrain.objects)
      objects.push_back({std::vector<double>(o.lo.begin(), o.lo.begin() + w.dim),
                         std::vector<double>(o.hi.begin(), o.hi.begin() + w.dim)});
    j["objects"] = std::move(objects);
  }
  return j;
}

} // namespace evoc::report
