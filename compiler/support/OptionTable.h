// A command's own options as one table: each a flag, a text value or a
// range-checked whole number, given as `--name VALUE` or `--name=VALUE`,
// parsed one way with one error style ("evoc CMD: error: ...", and the
// command returns 2). The options every command shares (--set, --stdlib,
// -w, ...) are read first by the driver's parseCommonOptions; the
// benchmarks use the table too.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace evoc {

class OptionTable {
public:
  /// `command` starts every error: "evoc sim".
  explicit OptionTable(std::string command) : command_(std::move(command)) {}

  /// `--name`: sets dst.
  OptionTable &flag(const std::string &name, bool &dst);
  /// `--name VALUE`: the last one given.
  OptionTable &text(const std::string &name, std::string &dst);
  /// `--name N`: digits only and lo <= N <= hi, else an error that gives the
  /// range and, after it, `note` (" (0: one per core)").
  OptionTable &integer(const std::string &name, int64_t lo, int64_t hi, int64_t &dst,
                       const std::string &note = "");
  OptionTable &integer(const std::string &name, int64_t lo, int64_t hi, int &dst,
                       const std::string &note = "");
  /// `--name VALUE` whose value `set` takes: it returns "" or the error's
  /// text (which follows "CMD: error: ").
  OptionTable &custom(const std::string &name, std::function<std::string(const std::string &)> set);
  /// Another spelling of the option `target`, already in the table.
  OptionTable &alias(const std::string &name, const std::string &target);
  /// Where arguments that are not options go (without it they are errors).
  OptionTable &positionals(std::vector<std::string> &dst);

  /// Parses `args`; false after printing the error.
  bool parse(const std::vector<std::string> &args) const;
  /// Prints "CMD: error: MESSAGE"; returns false.
  bool error(const std::string &message) const;

private:
  struct Option {
    std::string name;
    bool takesValue = false;
    std::function<std::string(const std::string &)> set; // "" or the error
  };
  const Option *find(const std::string &name) const;
  std::string command_;
  std::vector<Option> options_;
  std::vector<std::string> *positionals_ = nullptr;
};

} // namespace evoc
