#include "sim/model/keyspace.h"

#include <algorithm>

namespace locksim::model_detail {

const std::string* HashValue::get(std::string_view field) const {
  for (const auto& [name, value] : fields) {
    if (name == field) return &value;
  }
  return nullptr;
}

bool HashValue::set(std::string_view field, std::string_view value) {
  for (auto& [name, current] : fields) {
    if (name == field) {
      current.assign(value);
      return false;
    }
  }
  fields.emplace_back(std::string(field), std::string(value));
  return true;
}

bool HashValue::erase(std::string_view field) {
  const auto it = std::find_if(fields.begin(), fields.end(),
                               [field](const auto& pair) { return pair.first == field; });
  if (it == fields.end()) return false;
  fields.erase(it);
  return true;
}

const double* SortedSetValue::score(std::string_view member) const {
  const auto it = scores.find(member);
  return it == scores.end() ? nullptr : &it->second;
}

void SortedSetValue::set(std::string_view member, double score) {
  // A small sorted set (Redis's listpack, up to 128 members of at most 64 bytes) keeps a score as
  // text and reads "-0" back as the integer 0: ZSCORE answers "0". docs/model.md, item 21.
  if (score == 0) score = 0;
  const auto it = scores.find(member);
  if (it != scores.end()) {
    order.erase({it->second, it->first});
    it->second = score;
    order.emplace(score, it->first);
    return;
  }
  scores.emplace(std::string(member), score);
  order.emplace(score, std::string(member));
}

bool SortedSetValue::erase(std::string_view member) {
  const auto it = scores.find(member);
  if (it == scores.end()) return false;
  order.erase({it->second, it->first});
  scores.erase(it);
  return true;
}

std::string_view type_name(const Value& value) {
  switch (value.index()) {
    case 0:
      return "string";
    case 1:
      return "hash";
    case 2:
      return "list";
    default:
      return "zset";
  }
}

namespace {

// The estimates behind used_bytes, near what Redis 7.0 spends (a dictEntry, an robj and an sds
// header a key; a listpack entry's header per element of a small hash, list or sorted set).
constexpr std::size_t kEntryOverheadBytes = 64;
constexpr std::size_t kElementOverheadBytes = 16;
constexpr std::size_t kScoreBytes = 16;

std::size_t value_bytes(const Value& value) {
  std::size_t bytes = 0;
  if (const auto* text = std::get_if<StringValue>(&value)) return text->size();
  if (const auto* hash = std::get_if<HashValue>(&value)) {
    for (const auto& [field, text] : hash->fields) {
      bytes += field.size() + text.size() + 2 * kElementOverheadBytes;
    }
  } else if (const auto* list = std::get_if<ListValue>(&value)) {
    for (const std::string& element : *list) bytes += element.size() + kElementOverheadBytes;
  } else if (const auto* zset = std::get_if<SortedSetValue>(&value)) {
    for (const auto& [member, score] : zset->scores) {
      bytes += member.size() + kElementOverheadBytes + kScoreBytes;
    }
  }
  return bytes;
}

}  // namespace

std::size_t Keyspace::used_bytes() const {
  if (used_known_) return used_bytes_;
  std::size_t bytes = 0;
  for (const auto& [key, entry] : entries_) {
    bytes += kEntryOverheadBytes + key.size() + value_bytes(entry.value);
  }
  used_bytes_ = bytes;
  used_known_ = true;
  return bytes;
}

Entry* Keyspace::find(std::string_view key, std::int64_t now_ms, bool keep_expired) {
  used_known_ = false;
  const auto it = entries_.find(key);
  if (it == entries_.end()) return nullptr;
  if (is_live(it->second.expire_at_ms, now_ms)) return &it->second;
  if (!keep_expired) entries_.erase(it);
  return nullptr;
}

Entry& Keyspace::put(std::string_view key, Value value, std::int64_t expire_at_ms) {
  used_known_ = false;
  const auto it = entries_.find(key);
  if (it != entries_.end()) {
    it->second.value = std::move(value);
    it->second.expire_at_ms = expire_at_ms;
    return it->second;
  }
  return entries_.emplace(std::string(key), Entry{std::move(value), expire_at_ms}).first->second;
}

bool Keyspace::erase(std::string_view key) {
  used_known_ = false;
  const auto it = entries_.find(key);
  if (it == entries_.end()) return false;
  entries_.erase(it);
  return true;
}

std::vector<std::string> Keyspace::live_keys(std::int64_t now_ms) const {
  std::vector<std::string> keys;
  for (const auto& [key, entry] : entries_) {
    if (is_live(entry.expire_at_ms, now_ms)) keys.push_back(key);
  }
  return keys;
}

}  // namespace locksim::model_detail
