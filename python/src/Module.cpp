// The Python module evoc._evoc: a thin layer over the driver and the runtime
// (the same calls `evoc check`, `evoc sim`, `evoc run` and `evoc render`
// make); the Python package python/evoc wraps it (docs/python.md).
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/unique_ptr.h>
#include <nanobind/stl/vector.h>

#include <cmath>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/BodyModels.h"
#include "app/Driver.h"
#include "app/Pipeline.h"
#include "app/Session.h"
#include "core/JsonIO.h"
#include "core/Layout.h"
#include "core/Train.h"
#include "evolve/engine/EvoRng.h"
#include "ir/Names.h"
#include "support/Diagnostics.h"
#include "support/Error.h"
#include "support/SourceManager.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace evoc::python {
namespace {

using Array = nb::ndarray<nb::numpy, double>;
using Diag = std::tuple<std::string, int, int, std::string>;

/// A numpy array of `shape` over `data`, which it takes over: the result's
/// values are not copied again on their way to Python.
Array toArray(std::vector<double> data, std::vector<size_t> shape) {
  auto *owned = new std::vector<double>(std::move(data));
  if (owned->empty())
    owned->resize(1); // a valid pointer for an empty array
  nb::capsule owner(owned, [](void *p) noexcept { delete static_cast<std::vector<double> *>(p); });
  return Array(owned->data(), shape.size(), shape.data(), owner);
}

nb::dict paramSetToDict(runtime::ParamSet ps) {
  nb::dict d;
  for (auto &[name, t] : ps)
    d[name.c_str()] =
        toArray(std::move(t.data), std::vector<size_t>(t.shape.begin(), t.shape.end()));
  return d;
}

/// A robot with the genome it was expressed from, when it has one.
struct Body {
  runtime::Robot robot;
  std::optional<std::string> genome; // BodyModel::toJson, as JSON text
};

/// A checked and compiled experiment: the driver's Session and the body
/// model of its body block (when it has one).
struct Experiment {
  std::unique_ptr<app::Session> session;
  std::shared_ptr<const evolve::BodyModel> body;
  std::string file;
  app::CommonOptions options;
  std::string backend;
  /// The same program compiled with body gradients (PipelineOptions::
  /// bodyGradients), on the first simulate(body_grads=True).
  std::unique_ptr<app::Session> bodyGradSession;
  std::mutex bodyGradMutex;

  const app::Session &withBodyGradients() {
    std::lock_guard<std::mutex> lock(bodyGradMutex);
    if (!bodyGradSession) {
      app::CommonOptions o = options;
      o.bodyGradients = true;
      auto s = std::make_unique<app::Session>(o, backend);
      if (!s->ok())
        throw Error(file + ": does not compile with body gradients (the errors are above)");
      bodyGradSession = std::move(s);
    }
    return *bodyGradSession;
  }
};

/// Checks and compiles; on errors returns the diagnostics as (file, line,
/// column, message) instead, the located errors of `evoc check`.
std::pair<std::unique_ptr<Experiment>, std::vector<Diag>>
compile(const std::string &file, std::optional<std::string> text,
        const std::vector<std::pair<std::string, std::string>> &overrides,
        const std::vector<std::string> &stdlibDirs, const std::string &backend) {
  app::CommonOptions opts;
  opts.file = file;
  opts.text = std::move(text);
  opts.check.overrides = overrides;
  opts.check.stdlibDirs = stdlibDirs;
  auto exp = std::make_unique<Experiment>();
  exp->file = file;
  exp->options = opts;
  exp->backend = backend;
  {
    nb::gil_scoped_release release;
    exp->session = std::make_unique<app::Session>(opts, backend);
  }
  std::vector<Diag> diags;
  if (!exp->session->ok()) {
    const DiagnosticEngine &de = exp->session->diagnostics();
    const SourceManager &sm = exp->session->sources();
    for (const Diagnostic &d : de.diagnostics()) {
      if (d.severity != Severity::Error)
        continue;
      const SourceLoc &at = d.range.begin;
      diags.emplace_back(at.file >= 0 ? sm.path(at.file) : file, at.line, at.col, d.message);
    }
    if (diags.empty())
      diags.emplace_back(file, 0, 0, "the program did not compile (see stderr)");
    return {nullptr, diags};
  }
  if (exp->session->program().hasBody)
    exp->body = app::bodyModel(exp->session->program());
  return {std::move(exp), diags};
}

Body express(const Experiment &e, const evolve::Genome &g) {
  Body b;
  b.robot = e.body->express(g).robot;
  b.genome = e.body->toJson(g).dump();
  return b;
}

std::vector<Body> sample(const Experiment &e, int n, std::optional<uint64_t> seed) {
  if (!e.body)
    throw Error(e.file + ": the experiment has no body block to sample bodies from");
  if (n < 0)
    throw Error("sample: n must be >= 0");
  evolve::EvoRng rng(seed.value_or(e.session->program().evolve.seed));
  std::vector<Body> out;
  for (int i = 0; i < n; ++i)
    out.push_back(express(e, *e.body->sample(rng)));
  return out;
}

Body fromGenome(const Experiment &e, const std::string &genomeJson) {
  if (!e.body)
    throw Error(e.file + ": the experiment has no body block to express a genome with");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(genomeJson);
  } catch (const nlohmann::json::exception &x) {
    throw Error(std::string("genome: malformed JSON: ") + x.what());
  }
  return express(e, *e.body->fromJson(j));
}

/// Robots in any form `evoc sim --robots` reads (genomes expressed by the
/// experiment's body when given one), with the weights the text holds.
std::pair<std::vector<Body>, std::optional<std::vector<nb::dict>>>
bodiesFromJson(const std::string &text, const std::string &source, int dim, const Experiment *e) {
  std::function<runtime::Robot(const nlohmann::json &)> expressFn;
  if (e && e->body)
    expressFn = [e](const nlohmann::json &g) {
      return e->body->express(*e->body->fromJson(g)).robot;
    };
  runtime::RobotsInput in = runtime::parseRobotsInput(text, source, dim, expressFn);
  std::vector<Body> out;
  for (auto &r : in.robots)
    out.push_back({std::move(r), std::nullopt});
  std::optional<std::vector<nb::dict>> params;
  if (in.params) {
    params.emplace();
    for (const auto &ps : *in.params)
      params->push_back(paramSetToDict(ps));
  }
  return {std::move(out), std::move(params)};
}

/// A robot from arrays, validated as ROBOTS.json is (the same messages).
Body bodyFromArrays(nb::ndarray<const double, nb::ndim<2>, nb::c_contig, nb::device::cpu> points,
                    nb::ndarray<const int64_t, nb::ndim<2>, nb::c_contig, nb::device::cpu> springs,
                    nb::ndarray<const double, nb::ndim<2>, nb::c_contig, nb::device::cpu> props) {
  const size_t dim = points.shape(1);
  nlohmann::json pts = nlohmann::json::array(), spr = nlohmann::json::array();
  for (size_t i = 0; i < points.shape(0); ++i) {
    nlohmann::json p = nlohmann::json::array();
    for (size_t c = 0; c < dim; ++c)
      p.push_back(points(i, c));
    pts.push_back(p);
  }
  for (size_t i = 0; i < springs.shape(0); ++i)
    spr.push_back({springs(i, 0), springs(i, 1), props(i, 0), props(i, 1), props(i, 2)});
  nlohmann::json doc = {{"robots", {{{"points", pts}, {"springs", spr}}}}};
  // NaN cannot travel through JSON: name it here, as the parser would.
  for (size_t i = 0; i < points.shape(0); ++i)
    for (size_t c = 0; c < dim; ++c)
      if (!std::isfinite(points(i, c)))
        throw Error("body: point " + std::to_string(i) + " has a non-finite coordinate");
  for (size_t i = 0; i < props.shape(0); ++i)
    for (size_t c = 0; c < 3; ++c)
      if (!std::isfinite(props(i, c)))
        throw Error("body: spring " + std::to_string(i) + " has a non-finite " +
                    (c == 0   ? "rest length"
                     : c == 1 ? "stiffness"
                              : "actuation"));
  std::vector<runtime::Robot> r = runtime::parseRobotsJson(doc.dump(), "body", int(dim));
  return {std::move(r.at(0)), std::nullopt};
}

runtime::ParamSet toParamSet(const nb::dict &d) {
  runtime::ParamSet ps;
  for (auto [k, v] : d) {
    auto a = nb::cast<nb::ndarray<const double, nb::c_contig, nb::device::cpu>>(v);
    runtime::ParamTensor t;
    for (size_t i = 0; i < a.ndim(); ++i)
      t.shape.push_back(int64_t(a.shape(i)));
    t.data.assign(a.data(), a.data() + a.size());
    ps[nb::cast<std::string>(k)] = std::move(t);
  }
  return ps;
}

/// `evoc sim` on bodies already in memory: one dict per body. With
/// pointGrads / bodyGrads, each valid body also gets d loss / d its initial
/// positions / its float body buffers from runtime::inputGradients.
std::vector<nb::dict> simulate(Experiment &e, const std::vector<Body> &bodies,
                               std::optional<std::vector<nb::dict>> params, int64_t steps,
                               int iterations, int threads, bool trajectory, bool pointGrads,
                               bool bodyGrads) {
  const app::Session &s = *e.session;
  runtime::SimOptions so = s.trainOptions();
  so.iterations = iterations;
  if (steps > 0)
    so.steps = steps;
  so.threads = threads;
  std::vector<runtime::Robot> robots;
  for (const Body &b : bodies)
    robots.push_back(b.robot);
  std::optional<std::vector<runtime::ParamSet>> ps;
  if (params) {
    ps.emplace();
    for (const nb::dict &d : *params)
      ps->push_back(toParamSet(d));
  }
  runtime::SimResult r;
  std::vector<std::vector<std::vector<double>>> traj(robots.size());
  std::vector<runtime::InputGradients> ig(robots.size());
  {
    nb::gil_scoped_release release;
    r = app::simulateRobots(s, robots, ps, so);
    if (pointGrads || bodyGrads) { // the weights simulate used (iterations = 0: no update)
      const app::Session &gs = bodyGrads ? e.withBodyGradients() : s;
      runtime::ModuleInfo info(gs.module());
      for (size_t i = 0; i < robots.size(); ++i)
        if (r.results[i].valid)
          ig[i] = runtime::inputGradients(info, gs.executable(), robots[i],
                                          ps ? (*ps)[i] : r.results[i].params, so,
                                          ir::names::kPositions);
    }
    if (trajectory) {
      runtime::ModuleInfo info(s.module());
      std::vector<int64_t> times;
      for (int64_t t = 0; t < so.steps; ++t)
        times.push_back(t);
      for (size_t i = 0; i < robots.size(); ++i)
        if (r.results[i].valid)
          traj[i] = runtime::trajectory(info, s.executable(), robots[i],
                                        ps ? (*ps)[i] : r.results[i].params, so,
                                        ir::names::kPositions, times);
    }
  }
  std::vector<nb::dict> out;
  for (size_t i = 0; i < r.results.size(); ++i) {
    runtime::TrainResult &t = r.results[i];
    nb::dict d;
    d["valid"] = t.valid;
    d["error"] = t.error;
    d["loss"] = t.valid ? t.loss : std::nan("");
    const size_t curve = t.losses.size();
    d["losses"] = toArray(std::move(t.losses), {curve});
    d["grad"] = paramSetToDict(std::move(t.grad));
    d["params"] = paramSetToDict(std::move(t.params));
    d["best_params"] = paramSetToDict(std::move(t.bestParams));
    if (t.valid && (pointGrads || bodyGrads) && !ig[i].valid)
      throw Error("body " + std::to_string(i) + ": the gradient rollout failed: " + ig[i].error);
    if (pointGrads && !ig[i].initial.empty()) {
      const size_t dim = size_t(robots[i].dim);
      const size_t n = ig[i].initial.size();
      d["point_grad"] = toArray(std::move(ig[i].initial), {n / dim, dim});
    }
    if (bodyGrads && t.valid) {
      nb::dict bg;
      for (auto &[field, g] : ig[i].body) {
        const size_t n = g.size();
        bg[field.c_str()] = toArray(std::move(g), {n});
      }
      d["body_grad"] = bg;
    }
    if (trajectory && !traj[i].empty()) {
      std::vector<double> flat;
      for (const auto &row : traj[i])
        flat.insert(flat.end(), row.begin(), row.end());
      const size_t dim = size_t(robots[i].dim);
      const std::vector<size_t> shape = {traj[i].size(), traj[i][0].size() / dim, dim};
      d["trajectory"] = toArray(std::move(flat), shape);
    }
    out.push_back(std::move(d));
  }
  return out;
}

/// `evoc NAME args...` in this process; `hook` runs after every committed
/// generation of `evoc run` (with the GIL: Python's progress and Ctrl-C).
int runCommand(const std::string &name, const std::vector<std::string> &args,
               std::optional<nb::callable> hook) {
  // The hook holds Python objects: it is set and cleared with the GIL held,
  // and a Python exception it raises (KeyboardInterrupt) stops the run as an
  // evoc::Error and is raised again here.
  std::optional<nb::python_error> raised;
  const nb::callable *fn = hook ? &*hook : nullptr;
  if (fn)
    app::setRunHook([fn, &raised] {
      nb::gil_scoped_acquire acquire;
      try {
        if (nb::cast<bool>((*fn)()))
          throw Error("stopped from Python (resume the run to continue)");
      } catch (nb::python_error &e) {
        raised.emplace(std::move(e));
        throw Error("interrupted (resume the run to continue)");
      }
    });
  int rc = 1;
  std::exception_ptr failed;
  {
    nb::gil_scoped_release release;
    try {
      rc = app::runSubcommand(name, args);
    } catch (...) {
      failed = std::current_exception();
    }
  }
  app::setRunHook(nullptr);
  if (raised)
    throw nb::python_error(std::move(*raised));
  if (failed)
    std::rethrow_exception(failed);
  return rc;
}

} // namespace

NB_MODULE(_evoc, m) {
  m.doc() = "evoc's C++ core (driver and runtime); use the evoc package instead";
  static nb::exception<Error> evocError(m, "EvocError", PyExc_ValueError);

  nb::class_<Body>(m, "Body")
      .def_prop_ro("dim", [](const Body &b) { return b.robot.dim; })
      .def_prop_ro("num_points", [](const Body &b) { return b.robot.numPoints(); })
      .def_prop_ro("num_springs", [](const Body &b) { return b.robot.numSprings(); })
      .def(
          "points",
          [](const Body &b) {
            return toArray(b.robot.points, {size_t(b.robot.numPoints()), size_t(b.robot.dim)});
          },
          nb::rv_policy::take_ownership)
      .def(
          "spring_props",
          [](const Body &b) {
            std::vector<double> v;
            for (const auto &s : b.robot.springs)
              v.insert(v.end(), {s.rest, s.stiffness, s.actuation});
            return toArray(v, {b.robot.springs.size(), 3});
          },
          nb::rv_policy::take_ownership)
      .def("spring_ends",
           [](const Body &b) {
             std::vector<std::pair<int, int>> v;
             for (const auto &s : b.robot.springs)
               v.emplace_back(s.a, s.b);
             return v;
           })
      .def("parts",
           [](const Body &b) {
             return b.robot.hasParts ? std::optional(b.robot.partPoints) : std::nullopt;
           })
      .def_prop_ro("genome_json", [](const Body &b) { return b.genome; })
      .def("to_json", [](const Body &b) { return runtime::robotToJson(b.robot).dump(); });

  m.def("body_from_arrays", &bodyFromArrays, "points"_a, "springs"_a, "props"_a);
  m.def("bodies_from_json", &bodiesFromJson, "text"_a, "source"_a, "dim"_a, "experiment"_a.none());

  nb::class_<Experiment>(m, "Experiment")
      .def_prop_ro("file", [](const Experiment &e) { return e.file; })
      .def_prop_ro("dim", [](const Experiment &e) { return e.session->program().world.dim; })
      .def_prop_ro("steps", [](const Experiment &e) { return e.session->trainOptions().steps; })
      .def_prop_ro("iterations",
                   [](const Experiment &e) { return e.session->trainOptions().iterations; })
      .def_prop_ro("seed", [](const Experiment &e) { return e.session->trainOptions().seed; })
      .def_prop_ro("body_kind",
                   [](const Experiment &e) -> std::optional<std::string> {
                     if (!e.body)
                       return std::nullopt;
                     return e.body->kind();
                   })
      .def("sample", &sample, "n"_a, "seed"_a.none())
      .def("from_genome", &fromGenome, "genome_json"_a)
      .def("simulate", &simulate, "bodies"_a, "params"_a.none(), "steps"_a, "iterations"_a,
           "threads"_a, "trajectory"_a, "point_grads"_a, "body_grads"_a);

  m.def("compile", &compile, "file"_a, "text"_a.none(), "overrides"_a, "stdlib_dirs"_a,
        "backend"_a);
  m.def("run_command", &runCommand, "name"_a, "args"_a, "hook"_a.none());
  m.def("version", [] { return std::string(app::version()); });
}

} // namespace evoc::python
