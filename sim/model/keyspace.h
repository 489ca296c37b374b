// keyspace.h: Keyspace, the model's one database: keys, their values (string, hash, list,
// sorted set) and their expiry in milliseconds of the server's wall clock.
//
// Expiry follows Redis 7.0: a key whose expiry is `at_ms` is live while now_ms <= at_ms and gone
// from the first millisecond after (db.c keyIsExpired: now > when). An expired key is never
// visible: find() erases it on the way (lazy expiry, as Redis does on access), or, on a replica,
// only hides it (a replica waits for its primary's DEL and keeps the entry). Keys are kept in a
// std::map, so iteration is in key order and a run never depends on hash order.
//
//   Keyspace keys;
//   Entry& e = keys.put("k", StringValue{"v"}, kNoExpiry);
//   Entry* live = keys.find("k", now_ms);  // nullptr once expired
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace locksim::model_detail {

// kNoExpiry: a key without a TTL.
constexpr std::int64_t kNoExpiry = -1;

using StringValue = std::string;

// HashValue: fields in insertion order, as Redis keeps a small hash (a listpack, up to 128
// fields of at most 64 bytes): HGETALL answers in that order. Linear lookup; hashes are small.
struct HashValue {
  std::vector<std::pair<std::string, std::string>> fields;

  const std::string* get(std::string_view field) const;
  // set: overwrites in place or appends; true if the field is new.
  bool set(std::string_view field, std::string_view value);
  bool erase(std::string_view field);
};

using ListValue = std::deque<std::string>;

// SortedSetValue: members ordered by (score, member bytes), as Redis orders them.
struct SortedSetValue {
  std::map<std::string, double, std::less<>> scores;
  std::set<std::pair<double, std::string>> order;

  const double* score(std::string_view member) const;
  void set(std::string_view member, double score);
  bool erase(std::string_view member);
  std::size_t size() const { return scores.size(); }
};

using Value = std::variant<StringValue, HashValue, ListValue, SortedSetValue>;

// type_name: TYPE's word for a value: "string", "hash", "list", "zset".
std::string_view type_name(const Value& value);

struct Entry {
  Value value;
  std::int64_t expire_at_ms = kNoExpiry;  // unix ms of the server's wall clock, or kNoExpiry
};

class Keyspace {
 public:
  // find: the live entry of `key` at `now_ms`, or nullptr. An expired entry is erased unless
  // keep_expired (a replica hides it but keeps it for its primary's DEL).
  Entry* find(std::string_view key, std::int64_t now_ms, bool keep_expired = false);
  // put: sets `key` to `value` with `expire_at_ms`, replacing any entry; returns it.
  Entry& put(std::string_view key, Value value, std::int64_t expire_at_ms);
  // erase: removes `key` whatever its expiry; true if there was an entry.
  bool erase(std::string_view key);
  void clear() {
    entries_.clear();
    used_known_ = false;
  }
  // used_bytes: the estimated memory of every entry (kept ones past their expiry included), as a
  // real server's used_memory counts the keyspace: per key kEntryOverheadBytes and its name, per
  // string its bytes, per hash field, list element or sorted-set member its bytes and an
  // overhead (keyspace.cc). Worked out again only after the keyspace may have changed.
  std::size_t used_bytes() const;

  // live_keys: the keys live at `now_ms`, in key order (expired ones are not erased here).
  std::vector<std::string> live_keys(std::int64_t now_ms) const;
  // entries: every entry, expired or not, in key order (for a replica's full sync, snapshots).
  const std::map<std::string, Entry, std::less<>>& entries() const { return entries_; }

 private:
  std::map<std::string, Entry, std::less<>> entries_;
  // A handler changes a value in place through the Entry* that find() gave it: any find() or
  // change makes the remembered size unknown.
  mutable std::size_t used_bytes_ = 0;
  mutable bool used_known_ = true;
};

// is_live: whether an entry with `expire_at_ms` is visible at `now_ms`.
constexpr bool is_live(std::int64_t expire_at_ms, std::int64_t now_ms) {
  return expire_at_ms == kNoExpiry || now_ms <= expire_at_ms;
}

}  // namespace locksim::model_detail
