// atomic_file_test: AtomicFile writes a file completely or not at all, and a failed write names
// the file and the system's reason and leaves no temporary behind.
#include "sim/core/atomic_file.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "sim/core/error.h"
#include "tests/support/file_size_limit.h"

namespace locksim {
namespace {

namespace fs = std::filesystem;

class AtomicFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    directory_ = fs::temp_directory_path() /
                 ("locksim-atomic-file-" + std::to_string(::getpid()) + "-" + info->name());
    fs::remove_all(directory_);
    fs::create_directories(directory_);
  }
  void TearDown() override { fs::remove_all(directory_); }

  static std::string read(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
  }

  fs::path directory_;
};

// Chunks written and committed end up in the file, and the temporary is gone.
TEST_F(AtomicFileTest, CommitRenamesTheWholeContentIntoPlace) {
  const fs::path path = directory_ / "out.txt";
  {
    AtomicFile file(path);
    file.write("hello ");
    file.write("world\n");
    EXPECT_FALSE(fs::exists(path));  // nothing visible before commit
    file.commit();
  }
  EXPECT_EQ(read(path), "hello world\n");
  EXPECT_FALSE(fs::exists(path.string() + ".tmp"));
}

// A writer destroyed without commit (an exception on the way) leaves neither file nor temporary,
// and an older file at the path is untouched.
TEST_F(AtomicFileTest, UncommittedWriterRemovesItsTemporary) {
  const fs::path path = directory_ / "out.txt";
  std::ofstream(path) << "old";
  {
    AtomicFile file(path);
    file.write("new content");
    EXPECT_TRUE(fs::exists(path.string() + ".tmp"));
  }
  EXPECT_FALSE(fs::exists(path.string() + ".tmp"));
  EXPECT_EQ(read(path), "old");
}

// A file that cannot be created is an EnvironmentError naming it and saying why.
TEST_F(AtomicFileTest, UncreatableFileNamesPathAndReason) {
  const fs::path path = directory_ / "missing-dir" / "out.txt";
  try {
    AtomicFile file(path);
    FAIL() << "no EnvironmentError";
  } catch (const EnvironmentError& error) {
    EXPECT_NE(std::string(error.what()).find(path.string() + ".tmp: No such file or directory"),
              std::string::npos)
        << error.what();
  }
}

// On a full disk (here: RLIMIT_FSIZE, so write fails with EFBIG) the message names the file and
// the reason, and no .tmp is left behind.
TEST_F(AtomicFileTest, FullDiskNamesTheReasonAndLeavesNoTemporary) {
  const fs::path path = directory_ / "big.txt";
  const std::string message = test_support::message_under_file_size_limit(4096, [&] {
    AtomicFile file(path);
    for (int i = 0; i < 100; ++i) file.write(std::string(1000, 'x'));
    file.commit();
  });
  EXPECT_NE(message.find("cannot write " + path.string() + ".tmp: File too large"),
            std::string::npos)
      << message;
  EXPECT_FALSE(fs::exists(path.string() + ".tmp"));
  EXPECT_FALSE(fs::exists(path));
}

// The error of the buffered tail, only seen when commit() flushes, is caught too.
TEST_F(AtomicFileTest, ErrorInTheLastFlushIsCaught) {
  const fs::path path = directory_ / "tail.txt";
  const std::string message = test_support::message_under_file_size_limit(10, [&] {
    AtomicFile file(path);
    file.write("more than ten bytes, but less than one stdio buffer");
    file.commit();
  });
  EXPECT_NE(message.find("File too large"), std::string::npos) << message;
  EXPECT_FALSE(fs::exists(path.string() + ".tmp"));
  EXPECT_FALSE(fs::exists(path));
}

}  // namespace
}  // namespace locksim
