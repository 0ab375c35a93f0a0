// The report's world and trajectory callback on top of a compiled experiment.
#include "app/ReportSupport.h"

#include "evolve/train/TrainEvaluate.h"
#include "ir/Names.h"

namespace evoc::app {

report::World reportWorld(const sema::CheckedProgram &p, const runtime::TrainOptions &train) {
  report::World w;
  w.dim = int(p.world.dim);
  w.upAxis = train.upAxis;
  w.groundY = train.groundHeight;
  w.terrain = train.terrain;
  w.steps = train.steps;
  w.dt = p.world.dt;
  return w;
}

std::string controllerOutputField(const sema::CheckedProgram &p) {
  if (!p.controller || p.controller->outputs.empty())
    return "";
  const auto *m = ast::dynCast<ast::MemberExpr>(p.controller->outputs[0].target.get());
  const auto *set = m ? ast::dynCast<ast::NameExpr>(m->base.get()) : nullptr;
  return set ? set->name + "." + m->member.name : "";
}

report::TrajectoryFn reportTrajectory(const runtime::ModuleInfo &info,
                                      const codegen::Executable &exe, runtime::TrainOptions train,
                                      std::string outputField) {
  return [&info, &exe, train,
          outputField](const runtime::Robot &robot, const nlohmann::json &params,
                       const std::vector<int64_t> &times, std::vector<std::vector<double>> *outputs,
                       std::vector<std::vector<double>> *objects) {
    const runtime::ParamSet weights = evolve::paramsFromJson(params);
    if (objects)
      *objects = evolve::objectTrajectory(info, exe, robot, weights, train, times);
    return runtime::trajectory(info, exe, robot, weights, train, ir::names::kPositions, times,
                               outputField.empty() ? nullptr : outputs, outputField);
  };
}

} // namespace evoc::app
