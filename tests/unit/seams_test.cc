// seams_test: the seams where a model of the world plugs in stay seams. Time is read, waited on
// and slept through a Clock (sim/core/clock.h), and only sim/core/clock.cc reads the machine's
// clocks; so a virtual clock replaces every one of them. The test reads the sources under sim/.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace {

namespace fs = std::filesystem;

const fs::path kSim = fs::path(LOCKSIM_TEST_SOURCE_DIR) / "sim";

// uses: "file:line: text" for every line of a C++ source under sim/ (but `except`) that matches.
std::vector<std::string> uses(const std::regex& pattern, const std::string& except) {
  std::vector<std::string> found;
  for (const fs::directory_entry& entry : fs::recursive_directory_iterator(kSim)) {
    const std::string ext = entry.path().extension().string();
    if (!entry.is_regular_file() || (ext != ".cc" && ext != ".h")) continue;
    const std::string name = fs::relative(entry.path(), kSim.parent_path()).string();
    if (name == except) continue;
    std::ifstream in(entry.path());
    std::string line;
    for (int number = 1; std::getline(in, line); ++number) {
      if (std::regex_search(line, pattern)) {
        found.push_back(name + ":" + std::to_string(number) + ": " + line);
      }
    }
  }
  return found;
}

std::string lines(const std::vector<std::string>& found) {
  std::ostringstream out;
  for (const std::string& f : found) out << "\n  " << f;
  return out.str();
}

TEST(Seams, TheSourcesExist) {
  ASSERT_TRUE(fs::exists(kSim / "core" / "clock.cc")) << kSim;
  // The pattern below finds what it is meant to find (the one file allowed to read the clock).
  const std::regex clock_read(R"(\b(steady_clock|system_clock|high_resolution_clock)\b)");
  EXPECT_FALSE(uses(clock_read, "").empty());
}

TEST(Seams, OnlyTheClockReadsTheMachinesClocks) {
  const std::regex clock_read(R"(\b(steady_clock|system_clock|high_resolution_clock)\b)");
  const std::vector<std::string> found = uses(clock_read, "sim/core/clock.cc");
  EXPECT_TRUE(found.empty()) << "read time through a Clock (sim/core/clock.h):" << lines(found);
}

// The calendar too (run ids, report dates): Clock::unix_seconds, so a virtual clock names runs.
TEST(Seams, OnlyTheClockReadsTheCalendar) {
  const std::regex calendar(
      R"(\bstd::time\(|[^_.a-z]time\(nullptr\)|\bgettimeofday\(|\bclock_gettime\()");
  const std::vector<std::string> found = uses(calendar, "sim/core/clock.cc");
  EXPECT_TRUE(found.empty()) << "read the calendar through Clock::unix_seconds:" << lines(found);
  EXPECT_FALSE(uses(calendar, "").empty());  // the pattern finds the one file allowed
}

// timed_waits: the sleeps and timed waits of the sources under sim/ (but `except`) that do not go
// through a Clock. A Clock's own wait_for/wait_until (clock.wait_until(cv, ...),
// real_clock().wait_for(...)) are allowed; a condition variable's own timed wait and
// std::this_thread's sleeps are not, in sim/core/ as anywhere else.
std::vector<std::string> timed_waits(const std::string& except) {
  const std::regex timed(
      R"(this_thread::sleep_for|this_thread::sleep_until|(\.|->)wait_for\(|(\.|->)wait_until\()");
  const std::regex through_a_clock(R"([cC]lock_?(\(\))?(\.|->)(base\(\)\.)?wait_(for|until)\()");
  std::vector<std::string> found;
  for (const std::string& f : uses(timed, except)) {
    if (!std::regex_search(f, through_a_clock)) found.push_back(f);
  }
  return found;
}

TEST(Seams, SleepsAndTimedWaitsGoThroughAClock) {
  const std::vector<std::string> found = timed_waits("sim/core/clock.cc");
  EXPECT_TRUE(found.empty()) << "wait and sleep through a Clock:" << lines(found);
  // The search reaches sim/core/: it finds the one file allowed (the real clock's cv.wait_until
  // and this_thread::sleep_for).
  bool clock_found = false;
  for (const std::string& f : timed_waits("")) clock_found |= f.rfind("sim/core/clock.cc:", 0) == 0;
  EXPECT_TRUE(clock_found);
}

}  // namespace

// Rooms: a module of sim/ includes only its own headers and those of the modules its
// locksim_module(... DEPS ...) line in sim/CMakeLists.txt names, directly or through them, so
// the link lines are the dependency direction and no circle hides behind an include.
namespace {

std::map<std::string, std::set<std::string>> module_deps() {
  std::ifstream in(kSim / "CMakeLists.txt");
  std::stringstream text;
  text << in.rdbuf();
  const std::string all = text.str();
  std::map<std::string, std::set<std::string>> deps;
  const std::regex module(R"(locksim_module\((\w+)([^)]*)\))");
  const std::regex dep(R"(locksim::(\w+))");
  for (auto m = std::sregex_iterator(all.begin(), all.end(), module); m != std::sregex_iterator();
       ++m) {
    std::set<std::string>& of = deps[(*m)[1].str()];
    const std::string list = (*m)[2].str();
    for (auto d = std::sregex_iterator(list.begin(), list.end(), dep);
         d != std::sregex_iterator(); ++d) {
      of.insert((*d)[1].str());
    }
  }
  // Close over the dependencies of dependencies (a module may include what it links through).
  for (bool grew = true; grew;) {
    grew = false;
    for (auto& [name, of] : deps) {
      for (const std::string& d : std::set<std::string>(of)) {
        for (const std::string& dd : deps[d]) grew |= of.insert(dd).second;
      }
    }
  }
  return deps;
}

std::vector<std::string> includes_outside_deps() {
  const auto deps = module_deps();
  const std::regex include(R"re(^#include "sim/(\w+)/)re");
  std::vector<std::string> found;
  for (const fs::directory_entry& entry : fs::recursive_directory_iterator(kSim)) {
    const std::string ext = entry.path().extension().string();
    if (!entry.is_regular_file() || (ext != ".cc" && ext != ".h")) continue;
    const fs::path rel = fs::relative(entry.path(), kSim);
    const std::string module = rel.begin()->string();
    if (module == "app" && rel.filename() == "main.cc") continue;  // the program: links app
    const auto of = deps.find(module);
    std::ifstream in(entry.path());
    std::string line;
    for (int number = 1; std::getline(in, line); ++number) {
      std::smatch m;
      if (!std::regex_search(line, m, include)) continue;
      const std::string target = m[1].str();
      if (target == module) continue;
      if (of == deps.end() || of->second.count(target) == 0) {
        found.push_back("sim/" + rel.string() + ":" + std::to_string(number) + ": " + line);
      }
    }
  }
  return found;
}

}  // namespace

TEST(Seams, ModulesIncludeOnlyWhatTheyLinkTo) {
  const auto deps = module_deps();
  // The parse found the rooms and the direction DESIGN.md gives them.
  for (const char* room : {"core", "world", "run", "client", "host", "driver", "simulate",
                           "explore", "app"}) {
    ASSERT_TRUE(deps.count(room)) << "no locksim_module(" << room << ") in sim/CMakeLists.txt";
  }
  EXPECT_TRUE(deps.at("host").count("client"));
  EXPECT_TRUE(deps.at("driver").count("host"));
  for (const auto& [low, high] : std::vector<std::pair<std::string, std::string>>{
           {"client", "host"}, {"client", "driver"}, {"host", "driver"}, {"run", "client"},
           {"driver", "simulate"}, {"simulate", "driver"}, {"simulate", "host"},
           {"world", "simulate"}, {"world", "driver"}}) {
    EXPECT_FALSE(deps.at(low).count(high)) << "sim/" << low << " depends on sim/" << high;
  }
  const std::vector<std::string> found = includes_outside_deps();
  EXPECT_TRUE(found.empty()) << "include what the module's DEPS name (sim/CMakeLists.txt):"
                             << lines(found);
}
