#include "sim/core/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <system_error>
#include <utility>

#include "sim/core/assert.h"
#include "sim/core/error.h"

namespace locksim {
namespace {

// special_kind: what a file that is neither regular nor a directory is, in words.
const char* special_kind(mode_t mode) {
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISBLK(mode)) return "a block device";
  return "not a regular file";
}

// writable_in_place: a file written into rather than replaced.
bool writable_in_place(mode_t mode) { return S_ISCHR(mode) || S_ISFIFO(mode); }

std::string quoted(const std::filesystem::path& path) { return "\"" + path.string() + "\""; }

// directory_of: the directory a new file at `path` goes into.
std::filesystem::path directory_of(const std::filesystem::path& path) {
  return path.parent_path().empty() ? std::filesystem::path(".") : path.parent_path();
}

}  // namespace

bool written_in_place(const std::filesystem::path& path) {
  struct stat status {};
  return ::stat(path.c_str(), &status) == 0 && writable_in_place(status.st_mode);
}

AtomicFile::AtomicFile(std::filesystem::path path)
    : path_(std::move(path)), temporary_(path_.string() + ".tmp") {
  struct stat status {};
  if (::stat(path_.c_str(), &status) == 0) {
    if (S_ISDIR(status.st_mode)) {
      throw EnvironmentError("cannot write " + path_.string() + ": it is a directory");
    }
    if (writable_in_place(status.st_mode)) {
      // O_NONBLOCK only for the open: a FIFO without a reader fails (ENXIO) instead of waiting.
      const int fd = ::open(path_.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
      if (fd < 0) {
        const int error = errno;
        throw EnvironmentError(
            "cannot write " + path_.string() + " (" + special_kind(status.st_mode) +
            "): " + (error == ENXIO ? "no process reads it" : std::strerror(error)));
      }
      const int flags = ::fcntl(fd, F_GETFL);
      if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
      file_ = ::fdopen(fd, "wb");
      if (file_ == nullptr) {
        const int error = errno;
        ::close(fd);
        throw EnvironmentError("cannot write " + path_.string() + ": " + std::strerror(error));
      }
      in_place_ = true;
      temporary_ = path_;
      return;
    }
    if (!S_ISREG(status.st_mode)) {
      throw EnvironmentError("cannot write " + path_.string() + ": it is " +
                             special_kind(status.st_mode) + ", not a regular file");
    }
    // A symbolic link to a regular file (/dev/stdout redirected to a file, a link kept in a CI
    // workspace) is followed: the file it names is replaced, the link stays a link, and the
    // temporary goes beside the file, not beside the link (in /dev).
    struct stat link_status {};
    std::error_code error;
    if (::lstat(path_.c_str(), &link_status) == 0 && S_ISLNK(link_status.st_mode)) {
      const std::filesystem::path target = std::filesystem::canonical(path_, error);
      if (!error) {
        path_ = target;
        temporary_ = path_.string() + ".tmp";
      }
    }
  }
  file_ = std::fopen(temporary_.c_str(), "wb");
  if (file_ == nullptr) {
    const int error = errno;
    throw EnvironmentError("cannot create " + temporary_.string() + ": " + std::strerror(error));
  }
}

AtomicFile::~AtomicFile() {
  if (file_ != nullptr) std::fclose(file_);
  if (!committed_ && !in_place_) {
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
  if (in_place_) {
    committed_ = true;
    return;
  }
  std::error_code error;
  std::filesystem::rename(temporary_, path_, error);
  if (error) {
    throw EnvironmentError("cannot rename " + temporary_.string() + " to " + path_.string() + ": " +
                           error.message());
  }
  committed_ = true;
}

std::string output_file_problem(const std::filesystem::path& path) {
  if (path.empty()) return "\"\": expected a file name, got an empty path";
  struct stat status {};
  if (::stat(path.c_str(), &status) == 0) {
    if (S_ISDIR(status.st_mode)) return quoted(path) + " is a directory (expected a file name)";
    if (writable_in_place(status.st_mode)) {
      // Written into, not replaced; only whether it may be opened for writing is known now.
      if (::access(path.c_str(), W_OK) != 0) {
        return quoted(path) + ": cannot write it (" + std::strerror(errno) + ")";
      }
      return "";
    }
    if (!S_ISREG(status.st_mode)) {
      return quoted(path) + " is " + special_kind(status.st_mode) + ", not a regular file";
    }
  } else if (errno != ENOENT) {
    return quoted(path) + ": " + std::strerror(errno);
  }
  // An existing file is replaced where it is, a symbolic link followed (AtomicFile does so).
  std::error_code error;
  const std::filesystem::path resolved = std::filesystem::canonical(path, error);
  const std::filesystem::path directory = directory_of(error ? path : resolved);
  struct stat directory_status {};
  if (::stat(directory.c_str(), &directory_status) != 0) {
    return quoted(path) + ": its directory " + quoted(directory) +
           (errno == ENOENT ? " does not exist" : std::string(": ") + std::strerror(errno));
  }
  if (!S_ISDIR(directory_status.st_mode)) {
    return quoted(path) + ": " + quoted(directory) + " is not a directory";
  }
  // The file goes in through a temporary and a rename: a file must be creatable beside it.
  std::string probe = (directory / ".locksim-probe-XXXXXX").string();
  const int fd = ::mkstemp(probe.data());
  if (fd < 0) {
    return quoted(path) + ": cannot create a file in " + quoted(directory) + " (" +
           std::strerror(errno) + ")";
  }
  ::close(fd);
  ::unlink(probe.c_str());
  return "";
}

std::string output_directory_problem(const std::filesystem::path& path) {
  if (path.empty()) return "\"\": expected a directory, got an empty path";
  // The nearest part of the path that exists is where the first new directory goes.
  std::filesystem::path existing = path;
  struct stat status {};
  while (::stat(existing.c_str(), &status) != 0) {
    if (errno != ENOENT) return quoted(existing) + ": " + std::strerror(errno);
    if (!existing.has_relative_path() || !existing.has_parent_path() ||
        existing.parent_path() == existing) {
      existing = ".";
      if (::stat(existing.c_str(), &status) != 0)
        return "\".\": " + std::string(std::strerror(errno));
      break;
    }
    existing = existing.parent_path();
  }
  if (!S_ISDIR(status.st_mode)) {
    if (existing == path) return quoted(path) + " exists and is not a directory";
    return quoted(path) + ": " + quoted(existing) + " is not a directory";
  }
  std::string probe = (existing / ".locksim-probe-XXXXXX").string();
  if (::mkdtemp(probe.data()) == nullptr) {
    return quoted(path) + ": cannot create a directory in " + quoted(existing) + " (" +
           std::strerror(errno) + ")";
  }
  ::rmdir(probe.c_str());
  return "";
}

}  // namespace locksim
