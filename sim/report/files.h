// files.h: write_file_atomically, so a report file is either complete or absent.
#pragma once

#include <filesystem>
#include <string_view>

namespace locksim {

// write_file_atomically: writes `content` to `path` through a temporary file in the same
// directory and a rename. Throws EnvironmentError naming the path on failure.
void write_file_atomically(const std::filesystem::path& path, std::string_view content);

}  // namespace locksim
