#include "sim/report/files.h"

#include <cstring>
#include <fstream>
#include <system_error>

#include "sim/core/error.h"

namespace locksim {

void write_file_atomically(const std::filesystem::path& path, std::string_view content) {
  const std::filesystem::path temporary = path.string() + ".tmp";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out) {
      throw EnvironmentError("cannot write " + temporary.string() + ": " + std::strerror(errno));
    }
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    if (!out.flush()) throw EnvironmentError("cannot write " + temporary.string());
  }
  std::error_code error;
  std::filesystem::rename(temporary, path, error);
  if (error) throw EnvironmentError("cannot rename " + temporary.string() + ": " + error.message());
}

}  // namespace locksim
