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

Entry* Keyspace::find(std::string_view key, std::int64_t now_ms, bool keep_expired) {
  const auto it = entries_.find(key);
  if (it == entries_.end()) return nullptr;
  if (is_live(it->second.expire_at_ms, now_ms)) return &it->second;
  if (!keep_expired) entries_.erase(it);
  return nullptr;
}

Entry& Keyspace::put(std::string_view key, Value value, std::int64_t expire_at_ms) {
  const auto it = entries_.find(key);
  if (it != entries_.end()) {
    it->second.value = std::move(value);
    it->second.expire_at_ms = expire_at_ms;
    return it->second;
  }
  return entries_.emplace(std::string(key), Entry{std::move(value), expire_at_ms}).first->second;
}

bool Keyspace::erase(std::string_view key) {
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
