// json_text.h: writing JSON text by hand, for the outputs too large to build as a JSON tree first
// (history.jsonl, trace.json): a tree costs hundreds of bytes per value, text costs its length.
//
//   std::string out;
//   JsonObjectWriter line(out);
//   line.number("time_ns", 1520431);
//   line.text("client", "A");
//   line.close();  // {"time_ns":1520431,"client":"A"}
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace locksim {

// append_json_string: `text` as a JSON string literal, quotes included (control characters and
// DEL escaped; other bytes copied as they are). EDN strings share it (sim/report/export.cc).
void append_json_string(std::string& out, std::string_view text);
// append_json_number: an integer, or a double in the shortest form that reads back the same.
void append_json_number(std::string& out, std::int64_t value);
void append_json_number(std::string& out, double value);

// JsonObjectWriter: `{"a":1,"b":"x"}` built field by field into `out`.
class JsonObjectWriter {
 public:
  explicit JsonObjectWriter(std::string& out) : out_(out) { out_ += '{'; }
  void number(std::string_view name, std::int64_t value) {
    field(name);
    append_json_number(out_, value);
  }
  void real(std::string_view name, double value) {
    field(name);
    append_json_number(out_, value);
  }
  void text(std::string_view name, std::string_view value) {
    field(name);
    append_json_string(out_, value);
  }
  // raw: a value that is already JSON text (an array or object written by the caller).
  void raw(std::string_view name, std::string_view json) {
    field(name);
    out_ += json;
  }
  void close() { out_ += '}'; }

 private:
  void field(std::string_view name) {
    if (!first_) out_ += ',';
    first_ = false;
    append_json_string(out_, name);
    out_ += ':';
  }
  std::string& out_;
  bool first_ = true;
};

}  // namespace locksim
