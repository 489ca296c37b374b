// atomic_file.h: AtomicFile, a file that is either written completely or not at all.
//
// The content goes to "<path>.tmp"; commit() flushes and closes it, checking every step, and
// renames it over `path`. A writer that is destroyed without commit() (an exception on the way, a
// full disk) removes the temporary, so no ".tmp" is left behind. Every failure is an
// EnvironmentError naming the file and the reason from the system ("No space left on device",
// "File too large").
//
//   AtomicFile file(dir / "results.json");
//   file.write(header);
//   file.write(body);
//   file.commit();  // now dir/results.json exists, complete
#pragma once

#include <cstdio>
#include <filesystem>
#include <string_view>

namespace locksim {

// AtomicFile: one temporary file renamed into place by commit(). Not thread-safe; not copyable.
class AtomicFile {
 public:
  // AtomicFile: creates (or truncates) "<path>.tmp". Throws EnvironmentError if it cannot.
  explicit AtomicFile(std::filesystem::path path);
  // ~AtomicFile: without a successful commit(), closes and removes the temporary.
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  // write: appends `chunk` (buffered). Throws EnvironmentError on a write error; the file is then
  // unusable and is removed on destruction.
  void write(std::string_view chunk);
  // commit: flushes and closes the temporary, then renames it to `path`. Throws EnvironmentError
  // (and leaves no temporary behind once destroyed) if any step fails. Call at most once.
  void commit();

  const std::filesystem::path& path() const { return path_; }
  const std::filesystem::path& temporary_path() const { return temporary_; }

 private:
  // fail: closes the temporary and throws "cannot write <temporary>: <strerror(error)>".
  [[noreturn]] void fail(const char* doing, int error);

  std::filesystem::path path_;
  std::filesystem::path temporary_;
  std::FILE* file_ = nullptr;
  bool committed_ = false;
};

}  // namespace locksim
