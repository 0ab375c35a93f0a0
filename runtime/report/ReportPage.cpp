// The report page: HTML and styles around the data document and the script
// (ReportScript.cpp), all inline, so the one file opens from disk anywhere.
#include "report/ReportPage.h"
#include "report/Report.h"

#include "evolve/record/GaitLook.h"

#include <cmath>
#include <string>

namespace evoc::report {

namespace {

const char *kStyle = R"CSS(
body { font: 14px/1.4 system-ui, sans-serif; margin: 18px 28px; color: #222; background: #fff; }
h1 { font-size: 22px; margin: 0 0 2px; } h2 { font-size: 17px; margin: 26px 0 8px; border-bottom: 1px solid #ddd; }
h3 { font-size: 14px; margin: 6px 0; }
#where { color: #777; font-size: 12px; margin-bottom: 10px; }
#missing { background: #fff4e0; border: 1px solid #e0b060; padding: 6px 12px; margin: 10px 0; }
#errors { background: #fde; border: 1px solid #c66; padding: 6px 12px; white-space: pre-wrap; }
#figures th { text-align: left; font-weight: normal; color: #555; padding-right: 14px; }
canvas { border: 1px solid #ccc; background: #f8f8f4; }
.controls { margin: 4px 0 0; } .controls input[type=range] { width: 360px; vertical-align: middle; }
.legend { color: #555; font-size: 12px; }
svg.plot { margin: 4px 10px 4px 0; background: #fff; }
svg .frame { fill: none; stroke: #bbb; } svg .tick { font-size: 10px; fill: #555; }
svg .axis { font-size: 11px; fill: #333; } svg .ptitle { font-size: 12px; font-weight: 600; fill: #222; }
svg .none { font-size: 12px; fill: #999; }
#gallery { display: flex; flex-wrap: wrap; gap: 8px; }
.cell { cursor: pointer; font-size: 11px; color: #444; width: 152px; }
.cell:hover canvas { border-color: #333; }
.chain { font-size: 12px; color: #444; }
.extra { display: inline-block; margin: 0 14px 10px 0; vertical-align: top; }
.extra .controls input[type=range] { width: 120px; } .extra h3 { font-size: 12px; width: 320px; }
pre { background: #f6f6f6; padding: 8px; overflow: auto; max-height: 420px; font-size: 12px; }
)CSS";

const char *kBody = R"HTML(
<h1 id="title">evoc report</h1>
<div id="where"></div>
<div id="errors" hidden></div>
<div id="missing" hidden><b>This run is incomplete:</b><ul></ul></div>
<table id="figures"></table>
<h2>Gait</h2>
<div id="player-title"></div>
<div id="player"></div>
<div class="legend">Passive springs grey; actuated springs coloured by the controller's output:
red -1 (contract), orange 0 (rest length), blue +1 (extend); the gallery and the validation
players read it off the strain ((length / rest - 1) / |actuation|). Green: the trail of the centre
of mass. Ground marks every 0.1. The parts of a grammar body and the voxels of a voxel body are
tinted by kind (a material's own colour where it has one), as in best.svg (legend at the bottom of
the player). The particles of a particle body take their actuator's output in the springs' colours
(passive ones grey).</div>
<section id="extras-section" hidden><h2>One gait per validation command</h2><div id="extras"></div></section>
<h2>Fitness and learning</h2>
<div id="plots"></div>
<section id="map-section" hidden><h2>MAP-Elites archive (click a cell for its elite)</h2>
<div id="map"></div><div id="map-cell"></div></section>
<h2>Differentiability over generations</h2>
<div id="diff"></div>
<div id="curves"></div>
<h2>Gallery: the best of every generation, each new best where it took the lead (click to animate)</h2>
<div id="gallery"></div>
<h2>Lineage of the best</h2>
<div id="lineage"></div>
<h2>Experiment (resolved.evo)</h2>
<details><summary>show</summary><pre id="resolved">(resolved.evo is missing)</pre></details>
)HTML";

// `s` safe inside <script>: no "</" (so no "</script>") and no "<!--".
std::string scriptSafe(std::string s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '<' && i + 1 < s.size() && (s[i + 1] == '/' || s[i + 1] == '!'))
      out += "\\u003c";
    else
      out += s[i];
  }
  return out;
}

} // namespace

std::string reportHtml(const nlohmann::json &data) {
  std::string html = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
                     "<title>evoc report</title>\n<style>";
  html += kStyle;
  html += "</style></head>\n<body>";
  html += kBody;
  html += "<script id=\"data\" type=\"application/json\">";
  html += scriptSafe(data.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  html += "</script>\n<script id=\"look\" type=\"application/json\">";
  html += scriptSafe(evolve::look::lookJson().dump());
  html += "</script>\n<script>";
  html += reportScript();
  html += "</script>\n</body></html>\n";
  return html;
}

nlohmann::json curvePlot(
    const std::string &title, const std::string &xLabel, const std::string &yLabel,
    const std::vector<std::pair<std::string, std::vector<std::pair<double, double>>>> &series) {
  nlohmann::json s = nlohmann::json::array();
  for (const auto &[name, pts] : series) {
    nlohmann::json p = nlohmann::json::array();
    for (const auto &[x, y] : pts)
      p.push_back({x, std::isfinite(y) ? nlohmann::json(y) : nlohmann::json()});
    s.push_back({{"name", name}, {"pts", p}});
  }
  return {{"title", title}, {"xLabel", xLabel}, {"yLabel", yLabel}, {"series", s}};
}

std::string motionsPage(const World &world, const std::vector<Motion> &motions,
                        const nlohmann::json &plots, const std::string &title,
                        const std::vector<std::string> &missing) {
  nlohmann::json ms = nlohmann::json::array();
  for (const Motion &m : motions)
    ms.push_back(motionJson(m));
  nlohmann::json d = {{"kind", "motions"},
                      {"title", title},
                      {"world", worldJson(world)},
                      {"motions", ms},
                      {"plots", plots},
                      {"missing", missing},
                      {"extra", motions.size() > 1 ? motions.size() : 0}};
  if (!motions.empty())
    d["best"] = 0;
  return reportHtml(d);
}

std::string singleRobotPage(const World &world, const Motion &motion,
                            const std::vector<double> &losses, const std::string &title) {
  nlohmann::json plots = nlohmann::json::array();
  if (!losses.empty()) {
    std::vector<std::pair<double, double>> pts;
    for (size_t i = 0; i < losses.size(); ++i)
      pts.emplace_back(double(i), losses[i]);
    plots.push_back(curvePlot("learning curve", "iteration", "loss", {{"loss", pts}}));
  }
  return motionsPage(world, {motion}, plots, title, {});
}

} // namespace evoc::report
