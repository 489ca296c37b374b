#include "sim/core/atomic_file.h"

#include <cerrno>
#include <cstring>
#include <string>
#include <system_error>
#include <utility>

#include "sim/core/assert.h"
#include "sim/core/error.h"

namespace locksim {

AtomicFile::AtomicFile(std::filesystem::path path)
    : path_(std::move(path)), temporary_(path_.string() + ".tmp") {
  file_ = std::fopen(temporary_.c_str(), "wb");
  if (file_ == nullptr) {
    const int error = errno;
    throw EnvironmentError("cannot create " + temporary_.string() + ": " + std::strerror(error));
  }
}

AtomicFile::~AtomicFile() {
  if (file_ != nullptr) std::fclose(file_);
  if (!committed_) {
    std::error_code ignored;
    std::filesystem::remove(temporary_, ignored);
  }
}

void AtomicFile::fail(const char* doing, int error) {
  if (file_ != nullptr) {
    std::fclose(file_);
    file_ = nullptr;
  }
  throw EnvironmentError(std::string("cannot ") + doing + " " + temporary_.string() + ": " +
                         std::strerror(error));
}

void AtomicFile::write(std::string_view chunk) {
  LOCKSIM_ASSERT(file_ != nullptr && !committed_);
  if (chunk.empty()) return;
  errno = 0;
  if (std::fwrite(chunk.data(), 1, chunk.size(), file_) != chunk.size()) {
    fail("write", errno != 0 ? errno : EIO);
  }
}

void AtomicFile::commit() {
  LOCKSIM_ASSERT(file_ != nullptr && !committed_);
  // The buffered tail is written by fflush, and a delayed error (NFS, quota) may only show at
  // close: both are checked before the rename makes the file visible.
  errno = 0;
  if (std::fflush(file_) != 0) fail("write", errno != 0 ? errno : EIO);
  if (std::ferror(file_) != 0) fail("write", EIO);
  std::FILE* file = std::exchange(file_, nullptr);
  errno = 0;
  if (std::fclose(file) != 0) fail("close", errno != 0 ? errno : EIO);
  std::error_code error;
  std::filesystem::rename(temporary_, path_, error);
  if (error) {
    throw EnvironmentError("cannot rename " + temporary_.string() + " to " + path_.string() + ": " +
                           error.message());
  }
  committed_ = true;
}

}  // namespace locksim
