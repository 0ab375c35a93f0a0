// The JSON files `evoc sim` reads and writes (ROBOTS.json, PARAMS.json,
// OUT.json, issue 5), with validation errors that name robot and field.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/ParamSet.h"
#include "core/Robot.h"

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
/// A robot in the ROBOTS.json entry format.
nlohmann::json robotToJson(const Robot &r);
/// The OUT.json document of `evoc sim`: {"results": [{"loss", "grad",
/// "losses", "valid", ("error")}], "seconds", "robot_steps_per_second"}.
nlohmann::json simResultToJson(const SimResult &r);
/// Writes `j` to `path` atomically (temporary file, fsync, rename).
void writeJsonFile(const std::string &path, const nlohmann::json &j);

} // namespace evoc::runtime
