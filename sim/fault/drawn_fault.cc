// The drawn fault kinds, one row each (drawn_fault.h). A new kind is its file under
// sim/fault/drawn/ and one row here.
#include "sim/fault/drawn_fault.h"

#include <array>

#include "sim/core/assert.h"

namespace locksim {

// The kinds' own files define these (sim/fault/drawn/<word>.cc). Naming one in the table is also
// what links its file into a program: nothing registers itself at start-up.
extern const DrawnFaultType kDrawnCrash;
extern const DrawnFaultType kDrawnLose;
extern const DrawnFaultType kDrawnPause;
extern const DrawnFaultType kDrawnLostReply;

namespace {

// The table's order is the order of the "workload" keys the parser lists and of a CyclePlan's
// `drawn`; where a kind draws in a cycle's stream is its DrawSlot, not its row.
constexpr std::array kDrawnFaultKinds = {
    &kDrawnCrash,
    &kDrawnLose,
    &kDrawnPause,
    &kDrawnLostReply,
};
static_assert(kDrawnFaultKinds.size() <= kMaxDrawnFaultKinds,
              "raise kMaxDrawnFaultKinds (drawn_fault.h)");

// A kind's own stream is forked from its word (64-bit FNV-1a), so it needs no number of its own.
constexpr std::uint64_t fnv1a(std::string_view word) {
  std::uint64_t hash = 0xcbf29ce484222325ULL;
  for (const char c : word) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

}  // namespace

std::span<const DrawnFaultType* const> drawn_fault_types() { return kDrawnFaultKinds; }

const DrawnFaultType* drawn_fault_type(std::string_view word) {
  for (const DrawnFaultType* type : kDrawnFaultKinds) {
    if (type->word == word) return type;
  }
  return nullptr;
}

std::size_t drawn_fault_index(std::string_view word) {
  for (std::size_t i = 0; i < kDrawnFaultKinds.size(); ++i) {
    if (kDrawnFaultKinds[i]->word == word) return i;
  }
  LOCKSIM_ASSERT(!"no drawn fault kind has this word");
  return kDrawnFaultKinds.size();
}

std::uint64_t own_stream(const DrawnFaultType& type) { return fnv1a(type.word); }

double read_probability(const json::JsonReader& workload, std::string_view key) {
  const std::optional<json::JsonReader> value = workload.optional_member(key);
  return value ? value->probability() : 0.0;
}

}  // namespace locksim
