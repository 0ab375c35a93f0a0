// The JSON files `evoc sim` reads and writes (ROBOTS.json, PARAMS.json,
// OUT.json, issue 5), with validation errors that name robot and field.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/ParamSet.h"
#include "core/Robot.h"
#include "core/RobotJson.h"

namespace evoc::runtime {

struct SimResult;

/// Parses `{"robots": [{"points": [[x, y], ...], "springs": [[a, b, rest,
/// stiffness, actuation], ...]}, ...]}`. `source` names the file in errors;
/// `dim` (2 or 3, 0 = infer from the first point) is the coordinate count.
/// Throws evoc::Error naming the robot index and field on any defect:
/// malformed JSON (with line:col), a wrong row length, a NaN/inf coordinate,
/// an endpoint out of range, a zero or negative rest length, ...
std::vector<Robot> parseRobotsJson(const std::string &text,
                                   const std::string &source = "ROBOTS.json", int dim = 0);
/// Reads and parses a ROBOTS.json file (evoc::Error if unreadable).
std::vector<Robot> readRobotsFile(const std::string &path, int dim = 0);

/// The robots of a file `evoc sim --robots` reads, and the weights it
/// carries for them (parseRobotsInput).
struct RobotsInput {
  std::vector<Robot> robots;
  /// One ParamSet per robot when the file holds trained weights (a run's
  /// best.json: its "params"), else none.
  std::optional<std::vector<ParamSet>> params;
  std::string kind; ///< "robots" (ROBOTS.json), "robot" (one) or "population"
};
/// Parses robots in any form evoc writes them: ROBOTS.json (`{"robots":
/// [...]}`), one robot at the top level (`{"points", "springs", ...}`: a
/// run's best.json with its "params", evoc train's robot.json), or a
/// generation's population.json (`{"population": [...]}`: its members in
/// rank order, each its "robot", or, for members written without one, its
/// "genome" through `express`). Errors as parseRobotsJson, naming the
/// population member; a member without a robot and no `express` is an
/// error that says so.
RobotsInput
parseRobotsInput(const std::string &text, const std::string &source, int dim = 0,
                 const std::function<Robot(const nlohmann::json &genome)> &express = {});
/// Reads and parses such a file.
RobotsInput readRobotsInput(const std::string &path, int dim = 0,
                            const std::function<Robot(const nlohmann::json &genome)> &express = {});

/// Parses `{"params": [{"w1": [[...], ...], "b1": [...], ...}, ...]}` into
/// one ParamSet per robot. Checks that every tensor is rectangular and
/// finite; shapes are checked against the module later (Population).
std::vector<ParamSet> parseParamsJson(const std::string &text,
                                      const std::string &source = "PARAMS.json");
/// Reads and parses a PARAMS.json file.
std::vector<ParamSet> readParamsFile(const std::string &path);

/// A tensor as nested JSON arrays (a scalar as a number).
nlohmann::json tensorToJson(const ParamTensor &t);
/// A ParamSet as a JSON object of tensors.
nlohmann::json paramSetToJson(const ParamSet &p);
/// The OUT.json document of `evoc sim`: {"results": [{"loss", "grad",
/// "losses", "valid", ("error")}], "seconds", "robot_steps_per_second"}.
nlohmann::json simResultToJson(const SimResult &r);
/// Writes `j` to `path` atomically (temporary file, fsync, rename).
void writeJsonFile(const std::string &path, const nlohmann::json &j);

} // namespace evoc::runtime
