#include "sim/report/files.h"

#include "sim/core/atomic_file.h"

namespace locksim {

void write_file_atomically(const std::filesystem::path& path, std::string_view content) {
  AtomicFile file(path);
  file.write(content);
  file.commit();
}

}  // namespace locksim
