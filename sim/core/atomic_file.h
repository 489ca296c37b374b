// atomic_file.h: AtomicFile, a file that is either written completely or not at all, and
// output_file_problem / output_directory_problem, which say before any work whether an output
// path can be written at all.
//
// The content goes to "<path>.tmp"; commit() flushes and closes it, checking every step, and
// renames it over `path`. A writer that is destroyed without commit() (an exception on the way, a
// full disk) removes the temporary, so no ".tmp" is left behind. Every failure is an
// EnvironmentError naming the file and the reason from the system ("No space left on device",
// "File too large").
//
// A path that names a character device (/dev/null, /dev/stdout, a terminal) or a FIFO is written
// into, not replaced: a rename over it would put a regular file in its place (as root,
// `--junit /dev/null` replaced /dev/null). Such a file has no "complete or absent" to keep, so
// its writes go straight to it and commit() only flushes and closes. A FIFO must have a reader
// when it is opened (a writer would otherwise wait for one forever). A symbolic link to a regular
// file is followed: the file is replaced, the link stays.
//
//   AtomicFile file(dir / "results.json");
//   file.write(header);
//   file.write(body);
//   file.commit();  // now dir/results.json exists, complete
//
//   if (std::string problem = output_file_problem(path); !problem.empty()) refuse(problem);
#pragma once

#include <cstdio>
#include <filesystem>
#include <string>
#include <string_view>

namespace locksim {

// AtomicFile: one temporary file renamed into place by commit(), or a character device or FIFO
// written in place. Not thread-safe; not copyable.
class AtomicFile {
 public:
  // AtomicFile: creates (or truncates) "<path>.tmp", or opens `path` for writing if it is a
  // character device or a FIFO. Throws EnvironmentError if it cannot, or if `path` is a directory
  // or another kind of special file (nothing is created then).
  explicit AtomicFile(std::filesystem::path path);
  // ~AtomicFile: without a successful commit(), closes and removes the temporary.
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  // write: appends `chunk` (buffered). Throws EnvironmentError on a write error; the file is then
  // unusable and is removed on destruction.
  void write(std::string_view chunk);
  // commit: flushes and closes the temporary, then renames it to `path` (a device or FIFO: flushes
  // and closes it). Throws EnvironmentError (and leaves no temporary behind once destroyed) if any
  // step fails. Call at most once.
  void commit();

  const std::filesystem::path& path() const { return path_; }
  // temporary_path: where the content goes before commit(); `path` itself for a device or FIFO.
  const std::filesystem::path& temporary_path() const { return temporary_; }

 private:
  // fail: closes the temporary and throws "cannot write <temporary>: <strerror(error)>".
  [[noreturn]] void fail(const char* doing, int error);

  std::filesystem::path path_;
  std::filesystem::path temporary_;
  std::FILE* file_ = nullptr;
  bool in_place_ = false;  // a character device or FIFO, written without a temporary
  bool committed_ = false;
};

// written_in_place: whether an AtomicFile at `path` would write into it (a character device or a
// FIFO, following symbolic links) rather than replace it. Such a file is for one write: a FIFO's
// reader takes the first file and goes, so a writer that writes a file twice (a first version,
// then a complete one) writes it once, at the end.
bool written_in_place(const std::filesystem::path& path);

// output_file_problem: why an AtomicFile at `path` could not be written, "" if it can: `path` is
// empty, a directory, a special file other than a character device or FIFO, or in a directory
// that does not exist or where no file can be created (/proc/x, a read-only mount). Creating a
// file is tried (a probe, removed at once), since permissions do not tell for root or for /proc.
// The words start with the path quoted: "\"/proc/x\": cannot create a file in /proc (...)".
std::string output_file_problem(const std::filesystem::path& path);

// output_directory_problem: the same for a directory that will be created (with its parents)
// and written into: the nearest part of `path` that exists must be a directory where a
// directory can be created. "" if so.
std::string output_directory_problem(const std::filesystem::path& path);

}  // namespace locksim
