#include "sim/history/transfer.h"

#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>
#include <type_traits>
#include <vector>

#include "sim/core/error.h"

namespace locksim {
namespace {

static_assert(std::is_trivially_copyable_v<Event>, "events are copied as bytes");

// The magic says what the file is, the format and the event's size which build wrote it.
constexpr char kMagic[] = "locksim history transfer 1";
constexpr std::uint64_t kEventBytes = sizeof(Event);

class TransferWriter {
 public:
  explicit TransferWriter(const std::filesystem::path& path)
      : path_(path), out_(path, std::ios::binary) {
    if (!out_) throw EnvironmentError("cannot write " + path.string());
  }
  void bytes(const void* data, std::size_t size) {
    out_.write(static_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  void number(std::uint64_t n) { bytes(&n, sizeof n); }
  void text(std::string_view s) {
    number(s.size());
    bytes(s.data(), s.size());
  }
  void texts(const std::vector<std::string>& list) {
    number(list.size());
    for (const std::string& s : list) text(s);
  }
  void close() {
    out_.close();
    if (!out_) throw EnvironmentError("cannot write " + path_.string() + " (disk full?)");
  }

 private:
  std::filesystem::path path_;
  std::ofstream out_;
};

class TransferReader {
 public:
  explicit TransferReader(const std::filesystem::path& path)
      : path_(path), in_(path, std::ios::binary) {
    if (!in_) refuse("cannot open");
    std::error_code error;
    left_ = std::filesystem::file_size(path, error);
    if (error) refuse("cannot read its size");
  }
  void bytes(void* data, std::size_t size) {
    if (size > left_) refuse("cut short");
    in_.read(static_cast<char*>(data), static_cast<std::streamsize>(size));
    if (!in_) refuse("cut short");
    left_ -= size;
  }
  std::uint64_t number() {
    std::uint64_t n = 0;
    bytes(&n, sizeof n);
    return n;
  }
  // count: a number of items of at least `item_bytes` each, which the rest of the file can hold.
  std::uint64_t count(std::uint64_t item_bytes) {
    const std::uint64_t n = number();
    if (item_bytes > 0 && n > left_ / item_bytes) refuse("a count larger than the file");
    return n;
  }
  std::string text() {
    std::string s(count(1), '\0');
    bytes(s.data(), s.size());
    return s;
  }
  std::vector<std::string> texts() {
    std::vector<std::string> list(count(sizeof(std::uint64_t)));
    for (std::string& s : list) s = text();
    return list;
  }
  [[noreturn]] void refuse(const std::string& why) const {
    throw InputError(path_.string() + ": not a history transfer of this locksim build (" + why +
                     ")");
  }
  std::uint64_t left() const { return left_; }

 private:
  std::filesystem::path path_;
  std::ifstream in_;
  std::uint64_t left_ = 0;
};

}  // namespace

void write_history_transfer(const std::filesystem::path& path, const History& history) {
  TransferWriter out(path);
  out.bytes(kMagic, sizeof kMagic);
  out.number(kEventBytes);
  out.texts(history.clients);
  out.texts(history.keys);
  out.texts(history.servers);
  out.number(history.strings.size() - 1);  // id 0 is "" in every table
  for (StringId id = 1; id < history.strings.size(); ++id) out.text(history.strings.get(id));
  out.number(history.events.size());
  out.bytes(history.events.data(), history.events.size() * sizeof(Event));
  out.close();
}

History read_history_transfer(const std::filesystem::path& path) {
  TransferReader in(path);
  char magic[sizeof kMagic] = {};
  in.bytes(magic, sizeof magic);
  if (std::memcmp(magic, kMagic, sizeof kMagic) != 0) in.refuse("its first bytes");
  if (in.number() != kEventBytes) in.refuse("another size of event");
  History history;
  history.clients = in.texts();
  history.keys = in.texts();
  if (history.keys.empty() || !history.keys[0].empty()) in.refuse("its keys");
  history.servers = in.texts();
  const std::uint64_t strings = in.count(sizeof(std::uint64_t));
  for (std::uint64_t i = 0; i < strings; ++i) history.strings.add(in.text());
  history.events.resize(in.count(sizeof(Event)));
  in.bytes(history.events.data(), history.events.size() * sizeof(Event));
  if (in.left() != 0) in.refuse("bytes after its events");
  return history;
}

}  // namespace locksim
