#include "sim/json/file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>

#include "sim/core/error.h"

namespace locksim::json {
namespace {

// FileDescriptor: closes on every exit path.
class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  ~FileDescriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

// kind_of: the file type in words, for "not a regular file (a FIFO)".
std::string kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a plain file";
}

[[noreturn]] void not_regular(const std::string& file, mode_t mode, std::string_view what) {
  throw InputError(file + ": not a regular file (" + kind_of(mode) + "); expected a " +
                   std::string(what));
}

[[noreturn]] void too_large(const std::string& file, std::uintmax_t size, std::size_t max_bytes,
                            std::string_view what) {
  throw InputError(file + ": " + std::to_string(size) + " bytes is larger than the limit for a " +
                   std::string(what) + " (" + std::to_string(max_bytes) + " bytes)");
}

}  // namespace

void require_regular_file(const std::filesystem::path& path, std::string_view what) {
  struct stat status {};
  if (::stat(path.c_str(), &status) != 0) {
    const int error = errno;
    throw InputError(path.string() + ": cannot open (" + std::strerror(error) + ")");
  }
  if (!S_ISREG(status.st_mode)) not_regular(path.string(), status.st_mode, what);
}

std::string read_regular_file(const std::filesystem::path& path, std::size_t max_bytes,
                              std::string_view what) {
  const std::string file = path.string();
  // A first look refuses special files without opening them: opening a device can have effects,
  // and opening a FIFO for reading blocks until a writer comes.
  require_regular_file(path, what);
  struct stat status {};
  // The path may have been replaced since: O_NONBLOCK keeps a FIFO put there from blocking the
  // open, and the type is checked again on what was actually opened.
  const FileDescriptor fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
  if (fd.get() < 0) {
    const int error = errno;
    throw InputError(file + ": cannot open (" + std::strerror(error) + ")");
  }
  if (::fstat(fd.get(), &status) != 0) {
    const int error = errno;
    throw InputError(file + ": cannot read (" + std::strerror(error) + ")");
  }
  if (!S_ISREG(status.st_mode)) not_regular(file, status.st_mode, what);
  const auto size = static_cast<std::uintmax_t>(status.st_size);
  if (size > max_bytes) too_large(file, size, max_bytes, what);

  // Read at most one byte more than allowed: a file that grew since fstat is still caught.
  std::string text(static_cast<std::size_t>(size) + 1, '\0');
  std::size_t length = 0;
  while (true) {
    if (length == text.size()) {
      if (length > max_bytes) too_large(file, length, max_bytes, what);
      text.resize(std::min(text.size() * 2, max_bytes + 1));
    }
    const ssize_t count = ::read(fd.get(), text.data() + length, text.size() - length);
    if (count == 0) break;
    if (count < 0) {
      if (errno == EINTR) continue;
      const int error = errno;
      throw InputError(file + ": cannot read (" + std::strerror(error) + ")");
    }
    length += static_cast<std::size_t>(count);
  }
  if (length > max_bytes) too_large(file, length, max_bytes, what);
  text.resize(length);
  return text;
}

nlohmann::json read_json_file(const std::filesystem::path& path, const JsonLimits& limits,
                              std::string_view what) {
  return parse_json_text(read_regular_file(path, limits.max_bytes, what), path.string(), limits);
}

}  // namespace locksim::json
