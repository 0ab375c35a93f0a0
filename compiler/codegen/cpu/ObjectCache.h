// On-disk cache of compiled kernel objects, keyed by a hash of what was compiled.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace evoc::codegen::cpu {

/// Lower-case hex SHA-256 of `data`.
std::string sha256Hex(std::string_view data);

/// The cache folder: `configured` if not empty, else $EVOC_CACHE_DIR, else
/// $XDG_CACHE_HOME/evoc, else ~/.cache/evoc (empty if none can be found).
std::string cacheDirectory(const std::string &configured);

/// Path of the entry for `key` in `dir`.
std::string cacheEntryPath(const std::string &dir, const std::string &key);

/// Reads the object stored under `key`. An entry whose header, key, length or
/// checksum does not match is treated as absent (and will be overwritten).
std::optional<std::string> cacheLoad(const std::string &dir, const std::string &key);

/// Stores `object` under `key`, atomically (temp file + rename). Returns
/// false, and leaves no partial entry, when the folder is not writable.
bool cacheStore(const std::string &dir, const std::string &key, std::string_view object);

} // namespace evoc::codegen::cpu
