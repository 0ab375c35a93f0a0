// The keys of the settings blocks `--set` reaches (world, evolve, learn,
// train), each with one line of documentation: the one list the checker
// validates against and editors complete from (docs/language.md has the
// full text of each).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace evoc::sema {

struct SettingKey {
  std::string_view block; ///< "world", "evolve", "learn" (evolve's or train's), "train"
  std::string_view key;
  std::string_view doc; ///< what it sets, its values and its default
};

/// Every key, block by block in the order docs/language.md lists them.
const std::vector<SettingKey> &allSettingKeys();
/// The keys of one block ("world", "evolve", "learn", "train").
const std::vector<std::string> &settingKeys(std::string_view block);
/// The entry of `key` in `block`, or null.
const SettingKey *findSettingKey(std::string_view block, std::string_view key);

} // namespace evoc::sema
