#include "sim/json/pointer.h"

#include <algorithm>
#include <cctype>
#include <optional>

#include "sim/core/assert.h"
#include "sim/json/messages.h"

namespace locksim::json {
namespace {

// array_index: an RFC 6901 array index: "0", or digits without a leading zero. "-" (the element
// after the last) names nothing that exists, so it is not an index here.
std::optional<std::size_t> array_index(const std::string& token) {
  if (token.empty() || token.size() > 9) return std::nullopt;  // arrays are far shorter
  if (token.size() > 1 && token.front() == '0') return std::nullopt;
  if (!std::all_of(token.begin(), token.end(),
                   [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; })) {
    return std::nullopt;
  }
  return static_cast<std::size_t>(std::stoul(token));
}

// element_range: "an index from 0 to 2" or, for an empty array, "no index (it is empty)".
std::string element_range(const nlohmann::json& array) {
  if (array.empty()) return "it is empty, so no index names an element";
  return "expected an index from 0 to " + std::to_string(array.size() - 1);
}

std::vector<std::string> keys_of(const nlohmann::json& object) {
  std::vector<std::string> keys;
  for (const auto& item : object.items()) keys.push_back(item.key());
  return keys;
}

}  // namespace

PointerTarget resolve_pointer(const nlohmann::json& document, std::string_view pointer) {
  PointerTarget target;
  if (!pointer.empty() && pointer.front() != '/') {
    target.error = "expected a JSON Pointer (RFC 6901) starting with '/', e.g. \"/lock/ttl_ms\"";
    return target;
  }
  // Split on '/' and unescape each token: "~1" is '/', "~0" is '~' (in that order, RFC 6901 4).
  std::size_t start = 1;
  while (start <= pointer.size() && !pointer.empty()) {
    const std::size_t end = std::min(pointer.find('/', start), pointer.size());
    std::string token;
    for (std::size_t i = start; i < end; ++i) {
      if (pointer[i] != '~') {
        token += pointer[i];
        continue;
      }
      if (i + 1 == end || (pointer[i + 1] != '0' && pointer[i + 1] != '1')) {
        target.tokens.clear();
        target.error =
            "'~' must be followed by 0 or 1 in a JSON Pointer (\"~0\" is '~', \"~1\" is '/')";
        return target;
      }
      token += pointer[i + 1] == '0' ? '~' : '/';
      ++i;
    }
    target.tokens.push_back(std::move(token));
    start = end + 1;
  }

  const nlohmann::json* value = &document;
  for (const std::string& token : target.tokens) {
    if (value->is_object()) {
      const auto found = value->find(token);
      if (found == value->end()) {
        const std::optional<std::string> hint = closest_match(token, keys_of(*value));
        target.error = target.path + " has no key " + describe(nlohmann::json(token)) +
                       (hint ? " (did you mean " + describe(nlohmann::json(*hint)) + "?)" : "");
        return target;
      }
      target.path = member_path(target.path, token);
      value = &*found;
    } else if (value->is_array()) {
      const std::optional<std::size_t> index = array_index(token);
      if (!index || *index >= value->size()) {
        target.error = target.path + " has " + std::to_string(value->size()) + " element" +
                       (value->size() == 1 ? "" : "s") + "; " + element_range(*value) + ", got " +
                       describe(nlohmann::json(token));
        return target;
      }
      target.path = index_path(target.path, *index);
      value = &(*value)[*index];
    } else {
      target.error = target.path + " is " + (value->is_null() ? "" : "a ") +
                     std::string(value->type_name()) + ", not an object or array; " +
                     describe(nlohmann::json(token)) + " cannot be inside it";
      return target;
    }
  }
  target.value = value;
  return target;
}

nlohmann::json& pointed_value(nlohmann::json& document, const std::vector<std::string>& tokens) {
  nlohmann::json* value = &document;
  for (const std::string& token : tokens) {
    if (value->is_object()) {
      const auto found = value->find(token);
      LOCKSIM_ASSERT(found != value->end());
      value = &*found;
    } else {
      const std::optional<std::size_t> index = array_index(token);
      LOCKSIM_ASSERT(value->is_array() && index && *index < value->size());
      value = &(*value)[*index];
    }
  }
  return *value;
}

}  // namespace locksim::json
