// coverage.h: what one schedule of `locksim explore` covered: each fault at the place of the lock
// it struck, and each pair of operations that raced on one key, read from the schedule's history
// in one pass; and the counts of a whole exploration, per item.
//
// An item is a small integer (CoverageItem), so a schedule's coverage is a set of bits that costs
// no allocation; it becomes words ("crash @ inside", "pause @ after_setnx", "release/expiry") only
// when a summary is printed or written. The items (docs/simulator.md, "Coverage"):
//
//   <fault> @ <place>  a fault struck: <fault> is "crash" or a history fault word (pause,
//                      partition, lose_reply, delay, kill_server, restart_server, clock_jump, ...);
//                      <place> is the variant checkpoint it struck at (a crash_at or pause_at step
//                      that reached it), else where its victim was: waiting (in an acquire),
//                      inside (holding), releasing (in a release) or outside. A lost reply or a
//                      delay, armed for a call's first command, strikes that call: the client's
//                      next acquire (waiting) or release (releasing). A server fault strikes
//                      every client: it covers the place of each client that was waiting, inside
//                      or releasing, and outside only if none was.
//   acquire/acquire, release/acquire, extend/acquire
//                      two clients' operations on one key overlapped (invoke to completion, in
//                      the history's order).
//   release/expiry     a release's interval held the whole span in which its client's lease could
//                      have run out (after the invoke, by the completion).
//
//   const Coverage covered = schedule_coverage(scenario, history, variant);
//   if (covered.without(seen).any()) ...  // the schedule covered something new
//   seen |= covered;
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sim/explore/exercise.h"
#include "sim/history/event.h"
#include "sim/lock/variant.h"
#include "sim/scenario/scenario.h"

namespace locksim {

struct ExploreTarget;  // schedule.h

// CoverageItem: one item, as an integer below kCoverageItems. A fault item is
// kind * kCoveragePlaces + place: kind 0 is "crash", kind 1 + k the FaultKind k; place 0 to 3 are
// waiting, inside, releasing and outside, place 4 + i the variant's checkpoint i
// (LockVariant::checkpoints order, or CoverageCounts::points). The races follow them.
using CoverageItem = std::uint16_t;
inline constexpr std::size_t kCoverageKinds = 19;
inline constexpr std::size_t kCoveragePlaces = 16;
inline constexpr std::size_t kCoverageCheckpoints = kCoveragePlaces - 4;  // beyond: place words
inline constexpr CoverageItem kAcquireAcquire = kCoverageKinds * kCoveragePlaces;
inline constexpr CoverageItem kReleaseAcquire = kAcquireAcquire + 1;
inline constexpr CoverageItem kExtendAcquire = kAcquireAcquire + 2;
inline constexpr CoverageItem kReleaseExpiry = kAcquireAcquire + 3;
inline constexpr std::size_t kCoverageItems = kReleaseExpiry + 1;

// CoveragePlace: where a client stands when a fault strikes it.
enum class CoveragePlace : std::uint8_t { kWaiting, kInside, kReleasing, kOutside };

// fault_item: the item of `kind` (nullopt: "crash") struck at `place`, or at checkpoint `point`
// (an index of the variant's checkpoints, below kCoverageCheckpoints).
CoverageItem fault_item(std::optional<FaultKind> kind, CoveragePlace place);
CoverageItem checkpoint_item(std::optional<FaultKind> kind, std::size_t point);

// Coverage: a set of items: what one schedule covered, or what a search has seen so far.
class Coverage {
 public:
  void add(CoverageItem item) { words_[item / 64] |= bit(item); }
  bool has(CoverageItem item) const { return (words_[item / 64] & bit(item)) != 0; }
  bool any() const {
    return std::any_of(words_.begin(), words_.end(), [](std::uint64_t w) { return w != 0; });
  }
  std::size_t count() const {
    std::size_t n = 0;
    for (const std::uint64_t w : words_) n += static_cast<std::size_t>(std::popcount(w));
    return n;
  }
  // without: the items of this set that `seen` lacks (a schedule's news: covered.without(seen)).
  Coverage without(const Coverage& seen) const {
    Coverage news;
    for (std::size_t i = 0; i < kWords; ++i) news.words_[i] = words_[i] & ~seen.words_[i];
    return news;
  }
  Coverage& operator|=(const Coverage& other) {
    for (std::size_t i = 0; i < kWords; ++i) words_[i] |= other.words_[i];
    return *this;
  }
  bool operator==(const Coverage&) const = default;
  // for_each: calls `f(CoverageItem)` for every item, in ascending order. Word by word, from one
  // set bit to the next: a schedule covers a handful of the items, and every schedule's coverage
  // is counted (testing each item's bit in turn was most of what counting it cost).
  template <typename F>
  void for_each(F&& f) const {
    for (std::size_t i = 0; i < kWords; ++i) {
      for (std::uint64_t w = words_[i]; w != 0; w &= w - 1) {
        f(static_cast<CoverageItem>(i * 64 + static_cast<std::size_t>(std::countr_zero(w))));
      }
    }
  }

 private:
  static constexpr std::size_t kWords = (kCoverageItems + 63) / 64;
  static constexpr std::uint64_t bit(CoverageItem item) { return std::uint64_t{1} << (item % 64); }
  std::array<std::uint64_t, kWords> words_{};
};

// schedule_coverage: what a schedule of `scenario` covered, from its `history` (one pass over the
// events; no allocation for up to 8 clients). A checkpoint is named from the scenario step of the
// call that was open when the fault struck (its crash_at or pause_at, found among `checkpoints`);
// a fault at a point beyond kCoverageCheckpoints, or not among them, counts at its place.
Coverage schedule_coverage(const Scenario& scenario, const History& history,
                           std::span<const LockVariant::CheckpointSite> checkpoints);
Coverage schedule_coverage(const Scenario& scenario, const History& history,
                           const LockVariant& variant);

// coverage_menu: the items `variant` can cover under the exercise menu `faults`: each menu fault
// at the places a scripted step puts it (a crash, pause or partition step inside or outside, a
// lost reply or a delay on an acquire or a release, a server fault anywhere), a checkpoint fault
// at each checkpoint, and the races the lock can run (extend/acquire if it renews,
// release/expiry if its key expires).
Coverage coverage_menu(const LockVariant& variant, const std::set<ExerciseFault>& faults);

// CoverageCounts: the counts of an exploration (ExploreSummary::coverage): how many schedules
// covered each item, the menu of what they could have, and the checkpoint names the items'
// checkpoint places stand for.
struct CoverageCounts {
  std::vector<std::string> points;  // checkpoint place i is points[i]
  Coverage menu;
  std::vector<std::uint64_t> schedules = std::vector<std::uint64_t>(kCoverageItems, 0);

  // add: one schedule's coverage.
  void add(const Coverage& covered) {
    covered.for_each([&](CoverageItem item) { ++schedules[item]; });
  }
  // covered: the items some schedule covered.
  Coverage covered() const;
};

// coverage_counts_for: empty counts for an exploration of `target`: its variant's checkpoints,
// and the menu of its exercise faults (a given scenario: the menu faults its steps use).
CoverageCounts coverage_counts_for(const ExploreTarget& target);

// coverage_word: the item's words ("crash @ inside", "pause @ after_setnx", "release/expiry"),
// its checkpoint named from `points`.
std::string coverage_word(CoverageItem item, const std::vector<std::string>& points);
// coverage_item: the item of `word` (as coverage_word writes it), a checkpoint place not yet in
// `points` appended to it; nullopt for words that name no item.
std::optional<CoverageItem> coverage_item(std::string_view word, std::vector<std::string>& points);

}  // namespace locksim
